"""What finding a connection's owner costs, per connection, by either way of asking.

`sock_diag` (server/sidemirror/sock_diag.py) asks the kernel for one socket by its address
pair; the /proc fallback (server/sidemirror/web/peer.py) reads /proc/net/tcp and tcp6 whole,
so its cost grows with the sockets open in the namespace. This opens N extra loopback
connections (a busy desktop holds a few hundred; another user can open thousands), then times
lookups of one more. Run: `PYTHONPATH=server python bench/peer_owner.py`.
"""

from __future__ import annotations

import os
import socket
import time

from sidemirror.sock_diag import tcp_socket_uid
from sidemirror.web.peer import TCP_TABLES, socket_uid

WAYS = {"sock_diag": tcp_socket_uid, "proc": socket_uid}


def measure(extra_connections: int, rounds: int = 300) -> dict[str, object]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(extra_connections + 1)
    held: list[socket.socket] = [listener]
    try:
        for _ in range(extra_connections + 1):
            held.append(socket.create_connection(listener.getsockname()))
            held.append(listener.accept()[0])
        server = held[-1]
        peer, local = server.getpeername(), server.getsockname()
        listed = sum(t.read_bytes().count(b"\n") - 1 for t in TCP_TABLES if t.exists())
        result: dict[str, object] = {"sockets_listed": listed}
        for name, look_up in WAYS.items():
            samples = []
            for _ in range(rounds):
                start = time.perf_counter()
                uid = look_up(peer, local)
                samples.append(time.perf_counter() - start)
                assert uid == os.geteuid(), uid
            samples.sort()
            result[f"{name}_median_us"] = round(samples[len(samples) // 2] * 1e6, 1)
            result[f"{name}_p95_us"] = round(samples[int(len(samples) * 0.95)] * 1e6, 1)
        return result
    finally:
        for s in held:
            s.close()


if __name__ == "__main__":
    for n in (0, 1000, 5000):
        print(f"{n:>5} extra connections: {measure(n)}")
