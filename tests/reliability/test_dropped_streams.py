"""A side panel that reconnects all day: streams opened and dropped must cost nothing after.

Each cycle opens a stream, reads its first frames (so the server has subscribed and sent its
snapshot) and hangs up. The server must notice at once and release the subscription; memory
returns to its baseline whatever the number of cycles. The real `sidemirror serve` process.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from tests.harness.auth import AUTH
from tests.harness.server import Server
from tests.harness.waiting import wait_until

from .report import record

WS_DIR = "/home/dev/reconnecting"
BASELINE_SLACK = 20 << 20  # the bound: back to baseline ± 20 MB


async def _open_and_drop(session: aiohttp.ClientSession, url: str) -> None:
    async with session.get(url, headers=AUTH) as resp:
        assert resp.status == 200
        seen = b""
        while b"event: snapshot" not in seen and b"event: activity" not in seen:
            chunk = await resp.content.readany()
            assert chunk, "stream ended before its first message"
            seen += chunk
    # Leaving the block closes the connection: the client is gone.


async def _cycles(server: Server, urls: list[str], count: int, parallel: int) -> None:
    connector = aiohttp.TCPConnector(limit=parallel, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        sem = asyncio.Semaphore(parallel)

        async def one(n: int) -> None:
            async with sem:
                await _open_and_drop(session, server.url(urls[n % len(urls)]))

        await asyncio.gather(*(one(n) for n in range(count)))


def _subscribers(server: Server) -> int:
    return int(server.health()["streams"])


def _run(tmp_path: Path, count: int) -> dict[str, float]:
    with Server(tmp_path) as server:
        # A session with a few hundred items: each snapshot is tens of KB, as in real use.
        lines = [{"type": "assistant", "content": f"reply {i} " + "x" * 400} for i in range(300)]
        server.ingest(WS_DIR, "s1", lines)
        # One browse action, so an activity stream's ring replay sends a first message too.
        server.post_json("/api/activity", {"command": "goto", "args": ["https://example.test"]})
        ws = server.get("/api/workspaces")["workspaces"][0]["id"]
        urls = [f"/workspace/{ws}/session/stream?session=s1", "/activity/stream"]
        asyncio.run(_cycles(server, urls, 50, 10))  # warm up allocator and caches
        wait_until(lambda: _subscribers(server) == 0, 10, "warm-up streams released")
        baseline = server.rss()
        asyncio.run(_cycles(server, urls, count, 20))
        # Released at once, not at the next item or ping: nothing is published meanwhile.
        wait_until(lambda: _subscribers(server) == 0, 10, "every dropped stream released")
        after = server.rss()
        figures = {"cycles": count, "baseline_mb": baseline / 2**20, "after_mb": after / 2**20}
        record("dropped_streams", figures, trials=count)
        assert after - baseline < BASELINE_SLACK, json.dumps(figures)
        return figures


def test_dropped_streams_release_their_subscription_at_once(tmp_path: Path) -> None:
    _run(tmp_path, 1_000)


@pytest.mark.soak
def test_ten_thousand_dropped_streams_leave_memory_at_baseline(tmp_path: Path) -> None:
    _run(tmp_path, 10_000)
