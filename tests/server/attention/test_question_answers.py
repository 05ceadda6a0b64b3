"""An `AskUserQuestion` asked through `sidemirror hook` (a real process, with the documented
PermissionRequest payload on stdin) and answered from the panel: the hook prints Claude Code's
documented PermissionRequest decision, `allow` with the tool's input plus the answers as
`updatedInput`; the timeline records it; a replay or a late answer changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
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

ASKED = events("ask-user-question.jsonl")[1]  # the PermissionRequest
REGISTRY = "Which registry should the package go to?"
CHECKS = "Which checks should run before publishing?"


async def _pending(server: HookServer) -> dict[str, Any] | None:
    rows = (await server.get("/api/decisions"))["decisions"]
    return rows[0] if rows else None


async def _answer(server: HookServer, request_id: str, body: object, **headers: str) -> Any:
    return await server.client.post(
        f"/api/decisions/{request_id}/answer",
        json=body,
        headers={**panel_headers(server.client), "Origin": EXT_ORIGIN, **headers},
    )


async def test_a_question_answered_from_the_panel_reaches_the_agent_as_its_answer(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(ASKED)
    pending = await until(lambda: _pending(server), what="the question is held")
    assert pending["tool_name"] == "AskUserQuestion"
    assert pending["answerable"] is True
    assert pending["tool_input"]["questions"][1]["multiSelect"] is True

    answers = {REGISTRY: "npm", CHECKS: "Tests, Build"}
    resp = await _answer(server, pending["id"], {"answers": answers})
    assert resp.status == 200, await resp.text()
    code, out = await finish(proc)
    assert code == 0
    assert json.loads(out) == decided(
        "allow", updatedInput={**ASKED["tool_input"], "answers": answers}
    )

    replay = await _answer(server, pending["id"], {"answers": answers})
    assert replay.status == 409
    assert (await replay.json())["error"]["outcome"] == "allow"
    snap = await server.get(f"/workspace/{WS}/session?session={SESSION}&limit=5")
    item = snap["items"][-1]
    assert item["subtype"] == "decision"
    assert "answered from the side panel" in item["content"]
    assert f"{CHECKS} → Tests, Build" in item["content"]


async def test_answers_need_the_panel_and_must_fit_the_questions(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(ASKED)
    pending = await until(lambda: _pending(server), what="the question is held")
    url = f"/api/decisions/{pending['id']}/answer"
    full = {"answers": {REGISTRY: "npm", CHECKS: "Lint"}}

    token_only = await server.client.post(url, json=full, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert token_only.status == 403
    for bad in (
        {"answers": {REGISTRY: "npm"}},  # one question left unanswered
        {"answers": {REGISTRY: "npm", CHECKS: "  "}},
        {"answers": {REGISTRY: "npm", CHECKS: "Lint", "Something else?": "yes"}},
        {"answers": [REGISTRY, "npm"]},
    ):
        resp = await _answer(server, pending["id"], bad)
        assert resp.status == 400, bad
        assert (await resp.json())["error"]["code"] == "bad_answer"
    assert proc.returncode is None  # still held: nothing was answered

    resp = await _answer(
        server, pending["id"], {"answers": {REGISTRY: "my own registry", CHECKS: "Lint"}}
    )
    assert resp.status == 200  # a free-text answer is an answer too
    _, out = await finish(proc)
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision["updatedInput"]["answers"][REGISTRY] == "my own registry"


async def test_a_permission_request_is_not_a_question(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))  # Bash: npm publish
    pending = await until(lambda: _pending(server), what="the request is held")
    assert "answerable" not in pending
    resp = await _answer(server, pending["id"], {"answers": {"x": "y"}})
    assert resp.status == 409
    assert (await resp.json())["error"]["code"] == "not_a_question"
    await server.client.post(
        f"/api/decisions/{pending['id']}",
        json={"behavior": "deny"},
        headers={**panel_headers(server.client), "Origin": EXT_ORIGIN},
    )
    await finish(proc)


async def test_a_question_that_cannot_be_read_is_left_to_the_terminal(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    unreadable = {**ASKED, "tool_input": {"questions": "Which registry?"}}
    proc = await server.start_hook(unreadable)
    pending = await until(lambda: _pending(server), what="the question is held")
    assert pending["answerable"] is False  # the card says "answer in the terminal"
    resp = await _answer(server, pending["id"], {"answers": {"Which registry?": "npm"}})
    assert resp.status == 409
    assert (await resp.json())["error"]["code"] == "not_a_question"
    assert proc.returncode is None
    proc.kill()
    await finish(proc)
