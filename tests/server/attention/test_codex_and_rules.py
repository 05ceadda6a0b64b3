"""Codex approvals and "Always allow", end to end: Codex's documented hook events go through
`sidemirror hook --agent codex` (a real process) into a server on a real socket; the panel
answers, and the hook prints exactly the decision output Codex (or Claude Code) documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.hook_process import decided
from tests.harness.waiting import until
from tests.server.attention.hook_support import (
    CODEX_EVENTS,
    CODEX_SESSION,
    CODEX_WS,
    HookServer,
    codex_hook_server,
    event,
    events,
    finish,
    hook_server,
)
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers


async def _pending(server: HookServer, count: int = 1) -> list[dict[str, Any]]:
    async def listed() -> list[dict[str, Any]] | None:
        rows = (await server.get("/api/decisions"))["decisions"]
        return rows if len(rows) == count else None

    return await until(listed, what=f"{count} pending request(s)")


async def _decide(server: HookServer, request_id: str, body: dict[str, Any]) -> Any:
    headers = {**panel_headers(server.client), "Origin": EXT_ORIGIN}
    return await server.client.post(f"/api/decisions/{request_id}", json=body, headers=headers)


async def test_a_codex_approval_gets_a_card_and_codex_its_documented_output(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await codex_hook_server(make_client, tmp_path)
    for payload in events(CODEX_EVENTS)[:3]:  # SessionStart, UserPromptSubmit, PreToolUse
        assert await server.hook(payload, agent="codex") == (0, "")
    assert await server.session_state(CODEX_SESSION) == ("running", None)

    proc = await server.start_hook(event("PermissionRequest", CODEX_EVENTS), agent="codex")
    [card] = await _pending(server)
    assert (card["agent"], card["workspace"], card["session"]) == ("codex", CODEX_WS, CODEX_SESSION)
    assert card["tool_name"] == "Bash"
    assert card["tool_input"]["command"] == "cargo test --workspace"
    assert card["rules"] == [
        {
            "index": 0,
            "text": 'Always allow commands starting with "cargo test" in your user settings',
        }
    ]
    row = await server.session_row(CODEX_SESSION)
    assert row is not None and (row["agent"], row["state"], row["reason"], row["exact"]) == (
        "codex",
        "waiting",
        "permission",
        True,
    )

    resp = await _decide(server, card["id"], {"behavior": "allow"})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert code == 0 and json.loads(out) == decided("allow")
    again = await _decide(server, card["id"], {"behavior": "allow"})
    assert again.status == 409  # answered once

    snap = await server.get(f"/workspace/{CODEX_WS}/session?session={CODEX_SESSION}&limit=3")
    decision = snap["items"][-1]
    assert (
        decision["subtype"] == "decision" and "Bash: cargo test --workspace" in decision["content"]
    )


async def test_a_codex_deny_carries_the_message_to_codex(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await codex_hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest", CODEX_EVENTS), agent="codex")
    [card] = await _pending(server)
    resp = await _decide(server, card["id"], {"behavior": "deny", "message": "run it in CI"})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert json.loads(out) == decided("deny", message="run it in CI")


async def test_always_allow_sends_claude_codes_own_suggestion_back(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    asked = event("PermissionRequest")
    proc = await server.start_hook(asked)
    [card] = await _pending(server)
    assert card["rules"] == [
        {"index": 0, "text": "Always allow Bash(npm publish) in this project's local settings"}
    ]
    refused = await _decide(server, card["id"], {"behavior": "deny", "rule": 0})
    assert refused.status == 400  # a rule goes with Allow only
    unknown = await _decide(server, card["id"], {"behavior": "allow", "rule": 1})
    assert unknown.status == 400  # only a rule the agent offered

    resp = await _decide(server, card["id"], {"behavior": "allow", "rule": 0})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert json.loads(out) == decided("allow", updatedPermissions=asked["permission_suggestions"])
    snap = await server.get(f"/workspace/{card['workspace']}/session?session={card['session']}")
    assert "Rule applied: Always allow Bash(npm publish)" in snap["items"][-1]["content"]


async def test_always_allow_sends_codexs_prefix_rule_back(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await codex_hook_server(make_client, tmp_path)
    asked = event("PermissionRequest", CODEX_EVENTS)
    proc = await server.start_hook(asked, agent="codex")
    [card] = await _pending(server)
    resp = await _decide(server, card["id"], {"behavior": "allow", "rule": 0})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert json.loads(out) == decided("allow", updatedPermissions=asked["permission_suggestions"])
