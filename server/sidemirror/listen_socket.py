"""The server's listening socket, bound before the server's code is imported.

Importing the server (aiohttp, the pydantic models, every route) is most of a start. Bound
first, the port is taken at once: a client that connects meanwhile (the extension's probe, a
script waiting for `/health`) waits in the listen backlog and is answered as soon as the app
runs, instead of being refused and told nothing runs. Standard library only, like
`runtime_file.py`: `sidemirror serve` binds before it imports anything else.
"""

from __future__ import annotations

import socket

# Where a server listens when no port is given: the first free one (the extension scans these).
PORT_RANGE = range(47470, 47480)
# Connections that wait while the server starts, or in a burst: another user's churn must not
# fill it and make the kernel drop the owner's handshakes (the kernel caps it at somaxconn).
BACKLOG = 1024


class PortUnavailable(Exception):
    pass


def bind_socket(host: str, port: int | None, prefer: int | None = None) -> socket.socket:
    """An explicit port binds exactly; otherwise `prefer` (the port the server had last time)
    when it is in 47470–47479 and free, else the first free port of that range. The socket
    listens, non-blocking, for the server to take over."""
    candidates = [port] if port is not None else list(PORT_RANGE)
    if port is None and prefer is not None and prefer in PORT_RANGE:
        candidates.remove(prefer)
        candidates.insert(0, prefer)
    last: OSError | None = None
    for candidate in candidates:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        # A restarted server must get its port back while old connections sit in TIME_WAIT, or
        # resume breaks; on Linux this still refuses a port another process is listening on.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, candidate))
        except OSError as exc:
            sock.close()
            last = exc
            continue
        sock.listen(BACKLOG)
        sock.setblocking(False)
        return sock
    if port is not None:
        raise PortUnavailable(f"cannot bind {host}:{port}: {last}")
    raise PortUnavailable(
        f"no free port in {PORT_RANGE.start}-{PORT_RANGE.stop - 1} on {host} (last error: {last})"
    )
