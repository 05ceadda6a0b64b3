"""One inbox: a session forwarded from another host is listed by `GET /api/attention` beside
the local ones, named with its host, its agent given, its state marked inferred (no hook of
that host reaches this server)."""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.clock import now_iso

from tests.harness.auth import AUTH
from tests.harness.waiting import until
from tests.server.remote.support import ForwardConnect
from tests.server.support import ClientFactory

KEY = "claude/-home-dev-app/s1.jsonl"


async def test_a_forwarded_session_is_in_the_inbox_with_its_host(
    make_client: ClientFactory, forward_ws: ForwardConnect
) -> None:
    client = await make_client()
    line = {
        "type": "user",
        "cwd": "/home/dev/app",
        "sessionId": "s1",
        "timestamp": now_iso(),
        "message": {"role": "user", "content": "Fix the build"},
    }
    async with forward_ws() as ws:
        await ws.send_str(json.dumps({"type": "hello", "label": "devbox", "version": 1}))
        await ws.receive_json()
        await ws.send_bytes(
            json.dumps({"file": KEY, "offset": 0}).encode()
            + b"\n"
            + (json.dumps(line) + "\n").encode()
        )
        await ws.receive_json()

        async def listed() -> dict[str, Any] | None:
            resp = await client.get("/api/attention", headers=AUTH)
            rows = (await resp.json())["sessions"]
            return next((r for r in rows if r["session"] == "s1"), None)

        row = await until(listed, what="the forwarded session in the inbox")
    assert row["workspace_name"] == "devbox:app"
    assert row["agent"] == "claude" and row["exact"] is False
    assert row["state"] in {"running", "idle"} and row["since"]
