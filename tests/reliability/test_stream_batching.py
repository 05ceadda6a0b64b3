"""Items that are already waiting go out as one write: the bytes must be exactly the frames
aiohttp-sse writes one by one (a resume of many items, and a burst published at once)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from sidemirror.app import create_app

from tests.harness.auth import AUTH, TOKEN
from tests.server.support import ingest, make_settings


def _frame(item: dict[str, Any], wire: str) -> bytes:
    return f"id: {item['id']}\nevent: {item['type']}\ndata: {wire}\n\n".encode()


async def test_resume_of_many_items_is_byte_identical(aiohttp_client: Any, tmp_path: Path) -> None:
    client: TestClient[Any, Any] = await aiohttp_client(create_app(make_settings(tmp_path), TOKEN))
    lines = [{"type": "assistant", "content": f"item {i} \u00e9\u2028", "ts": "2026-01-01T00:00:00Z"}
             for i in range(600)]  # fmt: skip
    await ingest(client, lines)
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]["id"]
    snap = await (await client.get(f"/workspace/{ws}/session?limit=10000", headers=AUTH)).json()
    items = snap["items"]
    # Replay everything after item 1: 599 items in three writes.
    resp = await client.get(
        f"/workspace/{ws}/session/stream?session=s1",
        headers={**AUTH, "Last-Event-ID": items[0]["id"]},
    )
    body = b""
    want_tail = _frame_of(items[-1])
    async with asyncio.timeout(10):
        while not body.endswith(want_tail):
            body += await resp.content.readany()
    resp.close()
    frames = body.split(b"\n\n")
    item_frames = [f + b"\n\n" for f in frames if f.startswith(b"id: ")]
    assert item_frames == [_frame_of(i) for i in items[1:]]


def _frame_of(item: dict[str, Any]) -> bytes:
    import json

    return _frame(item, json.dumps(item, ensure_ascii=False, separators=(",", ":")))
