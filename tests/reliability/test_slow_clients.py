"""Slow and hostile connections cannot hold the server (slowloris).

1,500 connections each send part of a request line and then a byte a second, against a real
`sidemirror serve` with a 1,024 open-file limit (the common default). Meanwhile `/health` and a
real request must keep answering, no "Too many open files" trace may appear, and the slow
connections must be closed once their headers are overdue.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import time
from pathlib import Path

from tests.harness.logs import tracebacks
from tests.harness.server import Server

from .report import record

SLOW = 1_500
FD_LIMIT = 1_024


async def _slow_client(
    port: int, opened: list[int], closed: list[int], stop: asyncio.Event
) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return  # refused outright: as good as closed
    opened.append(1)
    try:
        writer.write(b"GET /health HTTP/1.1\r\nHo")
        while not stop.is_set():
            await writer.drain()
            with contextlib.suppress(TimeoutError):
                # The server closing us shows as EOF here.
                if await asyncio.wait_for(reader.read(1), timeout=1.0) == b"":
                    closed.append(1)
                    return
            writer.write(b"s")
    except (ConnectionError, OSError):
        closed.append(1)
    finally:
        writer.close()


async def _health_latency(port: int) -> float:
    start = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.read(64), timeout=10)
    writer.close()
    assert head.startswith(b"HTTP/1.1 200"), head
    return time.monotonic() - start


async def _scenario(server: Server) -> dict[str, float]:
    opened: list[int] = []
    closed: list[int] = []
    stop = asyncio.Event()
    slow = [
        asyncio.create_task(_slow_client(server.port, opened, closed, stop)) for _ in range(SLOW)
    ]
    deadline = time.monotonic() + 30
    while len(opened) + len(closed) < SLOW * 0.9 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    latencies = [await _health_latency(server.port) for _ in range(20)]
    # Every slow connection is closed once its headers are overdue (10 s), none kept for ever.
    deadline = time.monotonic() + 60
    while len(closed) < len(opened) and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
    stop.set()
    await asyncio.gather(*slow, return_exceptions=True)
    latencies.sort()
    return {
        "slow_connections": len(opened),
        "closed_by_server": len(closed),
        "health_p50_ms": latencies[len(latencies) // 2] * 1000,
        "health_max_ms": latencies[-1] * 1000,
    }


def test_slowloris_neither_starves_health_nor_exhausts_files(tmp_path: Path) -> None:
    # The test's own 1,500 sockets need room above a 1,024 default.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    server = Server(tmp_path, fd_limit=FD_LIMIT)
    with server:
        figures = asyncio.run(_scenario(server))
        # A real request with a token still works at the end.
        assert server.get("/api/workspaces")["workspaces"] == []
    record("slowloris", figures, trials=SLOW)
    log = server.stderr()
    assert "Too many open files" not in log
    assert not tracebacks(log), tracebacks(log)[:3]
    assert figures["closed_by_server"] == figures["slow_connections"], figures
    # Generous for a loaded 2-core machine; without the guard /health timed out (10 s).
    assert figures["health_max_ms"] < 2_000, figures
