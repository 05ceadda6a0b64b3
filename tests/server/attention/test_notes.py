"""Notes and reviews typed in the panel, delivered by the session's next hook: `sidemirror hook`
(a real process, the documented PostToolUse / Stop / SessionEnd payloads on stdin) prints
Claude Code's documented output that carries them, once; the timeline records each state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.server.attention.hook_support import SESSION, WS, HookServer, events, hook_server
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers

AFTER = {e["hook_event_name"]: e for e in events("after-the-decision.jsonl")}
PREFIX = "A note from the user, sent from the Sidemirror side panel while you worked:"


async def _post(server: HookServer, path: str, body: object, **headers: str) -> Any:
    return await server.client.post(
        path, json=body, headers={**panel_headers(server.client), "Origin": EXT_ORIGIN, **headers}
    )


async def _note(server: HookServer, **body: object) -> dict[str, Any]:
    resp = await _post(server, "/api/notes", {"workspace": WS, "session": SESSION, **body})
    assert resp.status == 201, await resp.text()
    note: dict[str, Any] = (await resp.json())["note"]
    assert note["state"] == "queued"
    return note


async def _notes(server: HookServer) -> list[dict[str, Any]]:
    return list((await server.get(f"/api/notes?workspace={WS}&session={SESSION}"))["notes"])


async def _timeline(server: HookServer) -> list[str]:
    snap = await server.get(f"/workspace/{WS}/session?session={SESSION}&limit=20")
    return [i["content"] for i in snap["items"] if i.get("subtype") == "note"]


async def test_a_note_is_delivered_after_the_next_tool_call_once(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    note = await _note(server, text="Use pnpm, not npm.")
    assert (await _timeline(server))[-1].endswith("Use pnpm, not npm.")

    code, out = await server.hook(AFTER["PostToolUse"])
    assert code == 0
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": f"{PREFIX}\n\nUse pnpm, not npm.",
        }
    }
    assert await server.hook(AFTER["PostToolUse"]) == (0, "")  # delivered once
    assert await server.hook(AFTER["Stop"]) == (0, "")
    [listed] = await _notes(server)
    assert (listed["id"], listed["state"], listed["where"]) == (
        note["id"],
        "delivered",
        "PostToolUse",
    )
    assert "delivered after a tool call (PostToolUse)" in (await _timeline(server))[-1]

    replay = await _post(server, f"/api/notes/{note['id']}/cancel", {})
    assert replay.status == 409
    assert (await replay.json())["error"]["state"] == "delivered"


async def test_a_tool_call_inside_a_sub_agent_does_not_carry_the_note(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    await _note(server, text="For the main agent.")
    inside = {**AFTER["PostToolUse"], "agent_id": "agent-abc123", "agent_type": "Explore"}
    assert await server.hook(inside) == (0, "")
    [listed] = await _notes(server)
    assert listed["state"] == "queued"
    _, out = await server.hook(AFTER["PostToolUse"])
    assert "For the main agent." in json.loads(out)["hookSpecificOutput"]["additionalContext"]


async def test_a_note_is_delivered_at_the_end_of_the_turn(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    await _note(server, text="Also bump the version first.")
    code, out = await server.hook(AFTER["Stop"])
    assert code == 0
    assert json.loads(out) == {
        "decision": "block",
        "reason": f"{PREFIX}\n\nAlso bump the version first.",
    }
    [listed] = await _notes(server)
    assert (listed["state"], listed["where"]) == ("delivered", "Stop")
    assert "delivered at the end of the turn (Stop)" in (await _timeline(server))[-1]


async def test_a_two_comment_review_is_sent_as_one_note(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    comments = [
        {
            "path": "src/publish.js",
            "line": 12,
            "end_line": 13,
            "quote": ["const tag = 'latest';", "await publish(tag);"],
            "comment": "Publish under the `next` tag.",
        },
        {
            "path": "package.json",
            "line": 3,
            "quote": ['"version": "1.0.0",'],
            "comment": "Bump it.",
        },
    ]
    note = await _note(server, review={"comments": comments})
    assert note["kind"] == "review"
    _, out = await server.hook(AFTER["PostToolUse"])
    review = (
        "Review comments on your changes (2):\n\n"
        "1. src/publish.js:12-13\n> const tag = 'latest';\n> await publish(tag);\n"
        "Publish under the `next` tag.\n\n"
        '2. package.json:3\n> "version": "1.0.0",\nBump it.'
    )
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == f"{PREFIX}\n\n{review}"

    for bad in ({"comments": []}, {"comments": [{"path": "a", "line": 1}]}):
        resp = await _post(
            server, "/api/notes", {"workspace": WS, "session": SESSION, "review": bad}
        )
        assert resp.status == 400


async def test_a_cancelled_note_is_never_delivered(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    note = await _note(server, text="Stop after the tests.")
    resp = await _post(server, f"/api/notes/{note['id']}/cancel", {})
    assert resp.status == 200 and (await resp.json())["note"]["state"] == "cancelled"
    assert await server.hook(AFTER["PostToolUse"]) == (0, "")
    assert await server.hook(AFTER["Stop"]) == (0, "")
    assert "cancelled" in (await _timeline(server))[-1]


async def test_nothing_is_delivered_to_an_ended_session(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    await _note(server, text="One more thing.")
    assert await server.hook(AFTER["SessionEnd"]) == (0, "")
    [listed] = await _notes(server)
    assert listed["state"] == "dropped"
    assert listed["why"] == "the session ended before it could be read"
    assert "not delivered: the session ended" in (await _timeline(server))[-1]

    late = await _post(server, "/api/notes", {"workspace": WS, "session": SESSION, "text": "Hi"})
    assert late.status == 409
    assert (await late.json())["error"]["code"] == "session_ended"
    assert await server.hook(AFTER["Stop"]) == (0, "")


async def test_notes_need_the_panel_credential(make_client: ClientFactory, tmp_path: Path) -> None:
    server = await hook_server(make_client, tmp_path)
    body = {"workspace": WS, "session": SESSION, "text": "from a process with the token"}
    resp = await server.client.post("/api/notes", json=body, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert resp.status == 403
    unknown = await _post(server, "/api/notes", {**body, "session": "no-such-session"})
    assert unknown.status == 404
    assert await _notes(server) == []
    assert await server.hook(AFTER["PostToolUse"]) == (0, "")
