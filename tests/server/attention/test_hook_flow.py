"""Recorded Claude Code hook events replayed through `sidemirror hook` (a real process) into a
server on a real socket: the session's state follows, and a permission request is held until
the panel decides, the timeout passes, or the transcript moves on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.clock import now_iso

from tests.harness.hook_process import decided
from tests.harness.waiting import until
from tests.server.attention.hook_support import (
    SESSION,
    WS,
    HookServer,
    event,
    events,
    finish,
    hook_server,
)
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers

ALLOW = decided("allow")


async def _held(server: HookServer) -> dict[str, Any]:
    """The pending request, once the server holds it (and the session shows it waits)."""
    await until(lambda: _is(server, ("waiting", "permission")))
    pending = await until(lambda: _pending(server))
    return pending


async def _is(server: HookServer, wanted: tuple[str, str | None]) -> bool:
    return await server.session_state() == wanted


async def _pending(server: HookServer) -> dict[str, Any] | None:
    rows = (await server.get("/api/decisions"))["decisions"]
    return rows[0] if rows else None


async def _decide(server: HookServer, request_id: str, body: dict[str, Any], **headers: str) -> Any:
    return await server.client.post(
        f"/api/decisions/{request_id}",
        json=body,
        headers={**panel_headers(server.client), "Origin": EXT_ORIGIN, **headers},
    )


async def _items(server: HookServer) -> list[dict[str, Any]]:
    snap = await server.get(f"/workspace/{WS}/session?session={SESSION}&limit=5")
    return list(snap["items"])


async def test_replayed_events_drive_the_state_and_allow_reaches_the_hook(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    for payload in events("permission-request.jsonl")[:3]:  # start, prompt, PreToolUse
        assert await server.hook(payload) == (0, "")  # nothing printed: no context injected
    assert await server.session_state() == ("running", None)

    proc = await server.start_hook(event("PermissionRequest"))
    pending = await _held(server)
    assert pending["tool_name"] == "Bash"
    assert pending["tool_input"] == {"command": "npm publish", "description": "Publish the package"}
    assert proc.returncode is None  # held while nobody decides

    resp = await _decide(server, pending["id"], {"behavior": "allow"})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert code == 0 and json.loads(out) == ALLOW
    assert await server.session_state() == ("running", None)
    decision = (await _items(server))[-1]
    assert decision["type"] == "system" and decision["subtype"] == "decision"
    assert "Bash: npm publish" in decision["content"]
    assert "allowed from the side panel" in decision["content"]

    replay = await _decide(server, pending["id"], {"behavior": "allow"})
    assert replay.status == 409  # a replayed decision changes nothing

    for payload in events("after-the-decision.jsonl"):
        assert await server.hook(payload) == (0, "")
        if payload["hook_event_name"] == "Stop":
            assert await server.session_state() == ("idle", None)
        if payload.get("notification_type") == "idle_prompt":
            assert await server.session_state() == ("waiting", "input")
    rows = (await server.get("/api/attention"))["sessions"]
    assert SESSION not in [r["session"] for r in rows]  # ended: no longer live


async def test_deny_carries_the_message(make_client: ClientFactory, tmp_path: Path) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))
    pending = await _held(server)
    message = "Not today: run the tests first"
    resp = await _decide(server, pending["id"], {"behavior": "deny", "message": message})
    assert resp.status == 200
    code, out = await finish(proc)
    assert code == 0
    assert json.loads(out) == decided("deny", message=message)
    content = (await _items(server))[-1]["content"]
    assert "denied from the side panel" in content and message in content


async def test_a_timeout_prints_nothing_and_the_terminal_asks(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path, decision_timeout_s=0.5)
    code, out = await server.hook(event("PermissionRequest"))
    assert (code, out) == (0, "")
    assert await server.session_state() == ("waiting", "permission")  # the terminal asks now
    assert (await server.get("/api/decisions"))["decisions"] == []
    content = (await _items(server))[-1]["content"]
    assert "asked in the terminal" in content


async def test_a_transcript_that_moves_on_means_answered_in_the_terminal(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))
    await _held(server)
    line = {
        "type": "user",
        "sessionId": SESSION,
        "cwd": "/path/to/Demo",
        "uuid": "0d6c2a9e-1111-4222-8333-944445555666",
        "timestamp": now_iso(),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "ok"}],
        },
    }
    with server.transcript.open("a") as f:
        f.write(json.dumps(line) + "\n")
    code, out = await finish(proc)
    assert (code, out) == (0, "")
    assert await server.session_state() == ("running", None)
    items = await _items(server)
    assert any("answered in the terminal" in i.get("content", "") for i in items)
