"""One state rule in every view (docs/api.md, Session states): a real transcript appended while
the server tails it, read back through the sessions listing, `/api/workspaces`, the attention
listing, the session stream and the MCP tool, with a short `idle_time_s` so no test waits
minutes. Hooks make a state `exact`; what files and time suggest is `exact: false`."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from tests.harness.auth import AUTH
from tests.server.attention.hook_support import CWD, SESSION, TRANSCRIPT, WS, event, events, until
from tests.server.mcp.test_endpoint import call, open_session
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory, panel_headers

IDLE_S = 3.0  # long enough to see "running" first on a loaded machine
LINES = TRANSCRIPT.read_bytes().splitlines(keepends=True)
# The prompt, a reply and a tool call with no result yet: the agent stopped mid-turn.
MID_TURN = LINES[:4]
RESULT = LINES[4]  # that call's result: the session writes again


class Views:
    """Every place a client reads the session's state."""

    def __init__(self, client: TestClient[Any, Any]) -> None:
        self.client = client

    async def get(self, path: str) -> Any:
        resp = await self.client.get(path, headers=AUTH)
        assert resp.status == 200, await resp.text()
        return await resp.json()

    async def listed(self) -> dict[str, Any] | None:
        resp = await self.client.get(f"/workspace/{WS}/sessions", headers=AUTH)
        if resp.status != 200:
            return None
        rows = (await resp.json())["sessions"]
        return next((s for s in rows if s["id"] == SESSION), None)

    async def state(self) -> tuple[str, bool] | None:
        row = await self.listed()
        return None if row is None else (row["state"], row["exact"])

    async def workspace_active(self) -> bool:
        rows = (await self.get("/api/workspaces"))["workspaces"]
        return bool(next(w for w in rows if w["id"] == WS)["active"])

    async def attention(self) -> dict[str, Any]:
        rows = (await self.get("/api/attention"))["sessions"]
        return next(r for r in rows if r["session"] == SESSION)

    async def hook(self, payload: dict[str, Any]) -> Any:
        """POST a recorded hook event as this session's; returns the response."""
        named = {**payload, "cwd": CWD, "session_id": SESSION}
        return await self.client.post("/api/hooks/claude", json=named, headers=AUTH)

    async def mcp(self) -> tuple[str, bool]:
        sid = await open_session(self.client)
        got = await call(self.client, sid, "sidemirror_get_session", {"workspace": CWD})
        body = got["structuredContent"]
        return body["state"], body["exact"]


async def running_mid_turn(make_client: ClientFactory, tmp_path: Path) -> tuple[Views, Path]:
    """`tailed_mid_turn`, once the session shows running (inferred from the file)."""
    views, transcript = await tailed_mid_turn(make_client, tmp_path)
    await until(lambda: _is(views.state(), ("running", False)))
    return views, transcript


async def tailed_mid_turn(make_client: ClientFactory, tmp_path: Path) -> tuple[Views, Path]:
    projects = tmp_path / "claude-projects"
    transcript = projects / "-path-to-Demo" / TRANSCRIPT.name
    transcript.parent.mkdir(parents=True)
    transcript.touch()
    views = Views(await make_client(claude_dirs=[projects], idle_time_s=IDLE_S))
    with transcript.open("ab") as fh:
        for line in MID_TURN:
            fh.write(line)
            fh.flush()
    return views, transcript


async def test_a_transcript_that_stops_mid_turn_is_idle_everywhere_after_the_idle_time(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # Written just now, mid-turn: running, as far as the file tells (inferred).
    views, transcript = await running_mid_turn(make_client, tmp_path)
    assert await views.workspace_active() is True
    stream = await views.client.get(f"/workspace/{WS}/session/stream", headers=AUTH)
    reader = SSEReader(stream)
    last_write = time.time()

    # No agent process, no write for the idle time: idle in every view, inferred.
    status = await _next_status(reader)
    assert status == {"type": "session_status", "state": "idle", "session": SESSION,
                      "exact": False}  # fmt: skip
    assert await views.state() == ("idle", False)
    assert (await views.listed() or {})["active"] is False
    assert await views.workspace_active() is False
    row = await views.attention()
    assert (row["state"], row["exact"]) == ("idle", False)
    # Idle since its last write, not since the moment the server noticed.
    assert _epoch(row["since"]) <= last_write
    assert await views.mcp() == ("idle", False)

    # It writes again (the tool's result): a sign of life, running again.
    with transcript.open("ab") as fh:
        fh.write(RESULT)
    status = await _next_status(reader)
    assert (status["state"], status["exact"]) == ("running", False)
    assert await views.workspace_active() is True
    stream.close()


async def test_hook_states_are_exact_and_go_idle_once_the_agent_is_gone(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    views, _ = await running_mid_turn(make_client, tmp_path)
    resp = await views.hook(event("UserPromptSubmit"))
    assert resp.status == 200, await resp.text()
    # A hook said it: exact, in the listing, the attention rows and the MCP tool alike.
    assert await views.state() == ("running", True)
    row = await views.attention()
    assert (row["state"], row["exact"]) == ("running", True)
    assert await views.mcp() == ("running", True)

    # The hook said running, then nothing: no process, no write, no hook for the idle time.
    await until(lambda: _is(views.state(), ("idle", False)))
    row = await views.attention()
    assert (row["state"], row["exact"]) == ("idle", False)

    stop = next(e for e in events("after-the-decision.jsonl") if e["hook_event_name"] == "Stop")
    resp = await views.hook(stop)
    assert resp.status == 200, await resp.text()
    assert await views.state() == ("idle", True)  # now a hook said it


async def test_a_held_permission_request_keeps_its_session_waiting_past_the_idle_time(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    views, transcript = await running_mid_turn(make_client, tmp_path)
    held = asyncio.create_task(views.hook(event("PermissionRequest")))
    await until(lambda: _is(views.state(), ("waiting", True)))
    # Another session stopped mid-turn a moment later: once it is idle, the idle time has
    # passed for the waiting one too, which sent nothing since its hook.
    other = transcript.parent / "0a1b2c3d-0000-4000-8000-000000000000.jsonl"
    with other.open("w") as fh:
        for line in MID_TURN:
            fh.write(json.dumps({**json.loads(line), "sessionId": other.stem}) + "\n")
    other_ws_sessions = f"/workspace/{WS}/sessions"

    async def other_idle() -> bool:
        rows = (await views.get(other_ws_sessions))["sessions"]
        return any(r["id"] == other.stem and r["state"] == "idle" for r in rows)

    await until(other_idle)
    # Its agent is there, waiting for the answer: still waiting, as the hook said.
    assert await views.state() == ("waiting", True)
    pending = (await views.get("/api/decisions"))["decisions"]
    resp = await views.client.post(
        f"/api/decisions/{pending[0]['id']}",
        json={"behavior": "deny"},
        headers=panel_headers(views.client),
    )
    assert resp.status == 200, await resp.text()
    assert (await held).status == 200


async def _is(value: Any, wanted: Any) -> bool:
    return bool(await value == wanted)


async def _next_status(reader: SSEReader) -> dict[str, Any]:
    async with asyncio.timeout(IDLE_S * 10):
        while True:
            frame = await reader.event()
            if frame.event == "session_status":
                parsed: dict[str, Any] = json.loads(frame.get("data") or "")
                return parsed


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
