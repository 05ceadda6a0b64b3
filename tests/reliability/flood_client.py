"""Another OS user flooding the server (run by tests/reliability/test_flood.py under `setpriv`).

Standard library only: it runs as uid 65534 with the system's Python, from its source text.
    hold PORT CONNECTIONS RETRY_S   keep CONNECTIONS open, each asking `/health` with keep-alive
                                    and then holding on; one the server closes or refuses is
                                    opened again after RETRY_S
    churn PORT PAIRS WORKERS PAUSE_S   open PAIRS idle loopback pairs of its own (a large socket
                                    table), then WORKERS loops each connect, ask, read, close,
                                    pause
It prints `ready` once the flood is in place, and its counts as one JSON line when its stdin
closes, then exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
import sys
from collections import Counter

counts: Counter[str] = Counter()


def request(port: int) -> bytes:
    return f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()


async def ask(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """One connection, one request, its answer read: the open connection, or None."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request(port))
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    except (TimeoutError, OSError, asyncio.IncompleteReadError):
        counts["refused"] += 1
        return None
    counts["answered"] += 1
    counts["status " + head.split(b" ", 2)[1].decode()] += 1
    if b"\r\nconnection: close\r\n" in head.lower():
        counts["connection_close"] += 1
    length = 0
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    with contextlib.suppress(OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
        await asyncio.wait_for(reader.readexactly(length), 10)
    return reader, writer


async def hold_one(port: int, retry_s: float, started: list[int]) -> None:
    first = True
    while True:
        opened = await ask(port)
        if first:
            started.append(1)
            first = False
        if opened is not None:
            reader, writer = opened
            counts["held"] += 1
            with contextlib.suppress(OSError):
                await reader.read()  # until the server closes it
            counts["held"] -= 1
            counts["closed_by_server"] += 1
            writer.close()
        await asyncio.sleep(retry_s)


async def churn_one(port: int, pause_s: float) -> None:
    while True:
        opened = await ask(port)
        if opened is not None:
            opened[1].close()
        await asyncio.sleep(pause_s)


def idle_pairs(count: int) -> list[socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(count)
    held = [listener]
    for _ in range(count):
        held.append(socket.create_connection(listener.getsockname()))
        held.append(listener.accept()[0])
    return held


async def main(mode: str, port: int, args: list[str]) -> None:
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[None]] = []
    if mode == "hold":
        connections, retry_s = int(args[0]), float(args[1])
        started: list[int] = []
        tasks = [asyncio.create_task(hold_one(port, retry_s, started)) for _ in range(connections)]
        while len(started) < connections:
            await asyncio.sleep(0.05)
    else:
        pairs, workers, pause_s = int(args[0]), int(args[1]), float(args[2])
        held = idle_pairs(pairs)
        counts["idle_sockets"] = len(held)
        tasks = [asyncio.create_task(churn_one(port, pause_s)) for _ in range(workers)]
        while counts["answered"] < workers:
            await asyncio.sleep(0.05)
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.read)
    for task in tasks:
        task.cancel()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3:]))
