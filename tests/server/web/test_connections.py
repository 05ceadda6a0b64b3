"""The connection guard on its own: when a request's headers count as complete, and eviction.

The real-process behaviour (1,500 slow connections) is in tests/reliability/test_slow_clients.py;
here the edge cases of reading: a header end split across two reads, and headers that arrive in
the same read as a large body (which once hid the header end and closed a big upload).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from typing import Any

from aiohttp import web
from sidemirror.listen_socket import BACKLOG
from sidemirror.web.connections import ACCEPT_BURST, ConnectionGuard, GuardedSockSite


class _Inner(asyncio.Protocol):
    def __init__(self) -> None:
        self.data = b""
        self.lost = False

    def data_received(self, data: bytes) -> None:
        self.data += data

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


def _connect(guard: ConnectionGuard) -> tuple[Any, _Inner, _Transport]:
    inner = _Inner()
    conn: Any = guard.wrap(lambda: inner)()
    transport = _Transport()
    conn.connection_made(transport)
    return conn, inner, transport


async def test_headers_followed_by_a_large_body_in_one_read_count_as_complete() -> None:
    guard = ConnectionGuard(header_timeout=60)
    conn, inner, _ = _connect(guard)
    head = b"POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"
    conn.data_received(head + b"x" * 300_000)
    assert conn.timer is None and not guard._waiting  # no deadline left to close it
    assert inner.data == head + b"x" * 300_000  # aiohttp sees every byte, unchanged


async def test_a_header_end_split_across_reads_is_found() -> None:
    guard = ConnectionGuard(header_timeout=60)
    conn, _, _ = _connect(guard)
    for piece in (b"GET /health HTTP/1.1\r\nHost: h\r\n\r", b"\n"):
        conn.data_received(piece)
    assert conn.timer is None


async def test_overdue_headers_close_and_a_full_house_evicts_the_oldest_waiting() -> None:
    guard = ConnectionGuard(max_connections=2, header_timeout=60)
    slow, _, slow_transport = _connect(guard)
    slow.data_received(b"GET / HTTP/1.1\r\nHo")
    real, _, real_transport = _connect(guard)
    real.data_received(b"GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
    _, _, newcomer = _connect(guard)  # over the cap: the one still waiting goes, not the real one
    assert slow_transport.aborted and not real_transport.aborted and not newcomer.aborted
    assert guard.evicted == 1
    late, _, late_transport = _connect(guard)
    late._too_slow()  # its deadline passed with no header end
    assert late_transport.aborted and guard.timed_out == 1


async def test_the_kernel_queue_is_long_while_accept_bursts_stay_small() -> None:
    """The listen backlog (listen_socket.BACKLOG) keeps another user's churn from making the
    kernel drop the owner's handshakes; asyncio must still accept in bursts of ACCEPT_BURST, as
    the connection cap leaves room for one burst only (else: "Too many open files")."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(BACKLOG)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    runner = web.AppRunner(web.Application())
    await runner.setup()
    site = GuardedSockSite(runner, sock, ConnectionGuard(), backlog=BACKLOG)
    await site.start()
    try:
        assert site._server is not None
        assert site._server._backlog == ACCEPT_BURST  # type: ignore[attr-defined]
        listed = subprocess.run(
            ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True
        ).stdout.split()
        assert int(listed[2]) == BACKLOG  # Send-Q of a listener: its backlog
    finally:
        await runner.cleanup()
