""" "Allow all N waiting in this session": three real hook processes held at once, allowed in
one batch by the panel; each hook prints Claude Code's documented Allow. A request that closed
meanwhile is reported with how it ended, not answered again; only the panel can batch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.harness.hook_process import decided
from tests.harness.waiting import until
from tests.server.attention.hook_support import SESSION, WS, HookServer, event, finish, hook_server
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers

ALLOW = decided("allow")
COMMANDS = ("npm test", "npm run build", "npm publish")


def _asking(command: str) -> dict[str, Any]:
    asked = event("PermissionRequest")
    return {**asked, "tool_input": {"command": command, "description": command}}


async def _held(server: HookServer, count: int) -> list[dict[str, Any]]:
    async def listed() -> list[dict[str, Any]] | None:
        rows = (await server.get("/api/decisions"))["decisions"]
        return rows if len(rows) == count else None

    return await until(listed, what=f"{count} held requests")


async def _batch(server: HookServer, ids: list[str], **headers: str) -> Any:
    body = {"workspace": WS, "session": SESSION, "ids": ids, "behavior": "allow"}
    sent = {**panel_headers(server.client), "Origin": EXT_ORIGIN, **headers}
    return await server.client.post("/api/decisions/batch", json=body, headers=sent)


async def _three_held(
    make_client: ClientFactory, tmp_path: Path
) -> tuple[HookServer, list[asyncio.subprocess.Process], list[dict[str, Any]]]:
    """Three real hooks of one session, each held for the panel's decision."""
    server = await hook_server(make_client, tmp_path)
    procs = [await server.start_hook(_asking(c)) for c in COMMANDS]
    return server, procs, await _held(server, 3)


async def test_a_batch_of_three_allows_each_once(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server, procs, cards = await _three_held(make_client, tmp_path)
    assert sorted(c["tool_input"]["command"] for c in cards) == sorted(COMMANDS)

    resp = await _batch(server, [c["id"] for c in cards])
    assert resp.status == 200, await resp.text()
    results = (await resp.json())["results"]
    assert [r["result"] for r in results] == ["allowed"] * 3
    for proc in procs:
        code, out = await finish(proc)
        assert code == 0 and json.loads(out) == ALLOW

    again = await _batch(server, [c["id"] for c in cards])
    assert [r["outcome"] for r in (await again.json())["results"]] == ["allow"] * 3


async def test_a_request_that_closed_meanwhile_is_reported_not_answered(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server, procs, cards = await _three_held(make_client, tmp_path)
    first = cards[0]
    deny = await server.client.post(
        f"/api/decisions/{first['id']}",
        json={"behavior": "deny"},
        headers={**panel_headers(server.client), "Origin": EXT_ORIGIN},
    )
    assert deny.status == 200

    resp = await _batch(server, [c["id"] for c in cards])
    results = {r["id"]: r for r in (await resp.json())["results"]}
    assert results[first["id"]] == {
        "id": first["id"],
        "result": "already_answered",
        "outcome": "deny",
    }
    assert [results[c["id"]]["result"] for c in cards[1:]] == ["allowed", "allowed"]
    outputs = [json.loads((await finish(p))[1]) for p in procs]
    behaviors = sorted(o["hookSpecificOutput"]["decision"]["behavior"] for o in outputs)
    assert behaviors == ["allow", "allow", "deny"]


async def test_only_the_panel_can_batch_and_only_its_session(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(_asking("npm test"))
    [card] = await _held(server, 1)
    without_panel = await server.client.post(
        "/api/decisions/batch",
        json={"workspace": WS, "session": SESSION, "ids": [card["id"]], "behavior": "allow"},
        headers={**AUTH, "Origin": EXT_ORIGIN},
    )
    assert without_panel.status == 403
    elsewhere = await server.client.post(
        "/api/decisions/batch",
        json={"workspace": WS, "session": "another", "ids": [card["id"]], "behavior": "allow"},
        headers={**panel_headers(server.client), "Origin": EXT_ORIGIN},
    )
    assert (await elsewhere.json())["results"][0]["result"] == "other_session"
    assert len(await _held(server, 1)) == 1  # still waiting: nothing was answered
    proc.kill()
    await proc.wait()
