"""A session's card (`GET /workspace/{ws}/session/summary`), from recorded Claude Code sessions
served from followed transcripts: its totals are the sums of the turns the snapshot shows and
what the sessions listing says, its files are the Changes route's, and it names the transcript's file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.harness.auth import AUTH
from tests.server.review.test_changes import SESSION
from tests.server.sources.claude.test_live import SID as AGENT_SID
from tests.server.sources.claude.test_live import setup_project
from tests.server.sources.claude.test_tail_load import wait_listed
from tests.server.support import ClientFactory


async def _get(client: Any, path: str, **params: str) -> Any:
    resp = await client.get(path, params=params, headers=AUTH)
    assert resp.status == 200, await resp.text()
    return await resp.json()


def expected_totals(items: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [i for i in items if i["type"] == "turn_complete"]
    priced = [t for t in turns if t["cost_usd"] is not None]
    sub_cost = sum(t.get("subagent_cost_usd") or 0 for t in priced)
    cost = sum(t["cost_usd"] for t in priced)
    return {
        "turns": len(turns),
        "tokens": {
            kind: sum(t[f"{kind}_tokens"] for t in turns)
            for kind in ("input", "output", "cache_read", "cache_write")
        },
        "subagent_tokens": sum(t.get("subagent_tokens") or 0 for t in turns),
        "cost_usd": round(cost, 6) if priced else None,
        "subagent_cost_usd": round(sub_cost, 6),
        "models": list(dict.fromkeys(t["model"] for t in turns if t["model"])),
        "items": len(items),
    }


async def test_the_card_sums_the_turns_and_lists_the_changes(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    shutil.copyfile(SESSION, project / SESSION.name)
    agent_file = setup_project(tmp_path, "turn-2")
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    where: dict[str, str] = {}
    for w in (await _get(client, "/api/workspaces"))["workspaces"]:
        for s in (await _get(client, f"/workspace/{w['id']}/sessions"))["sessions"]:
            where[s["id"]] = w["id"]

    sub_agents_seen = False
    for sid, file in ((SESSION.stem, project / SESSION.name), (AGENT_SID, agent_file)):
        ws = where[sid]
        base = f"/workspace/{ws}/session"
        card = await _get(client, f"{base}/summary", session=sid)
        snap = await _get(client, base, session=sid, limit="10000")
        items = snap["items"]
        assert {k: card[k] for k in expected_totals(items)} == expected_totals(items)
        # The listing says the same figures, read once the session is (the snapshot read it).
        (entry,) = [
            s
            for s in (await _get(client, f"/workspace/{ws}/sessions"))["sessions"]
            if s["id"] == sid
        ]
        assert {k: entry[k] for k in ("turns", "tokens", "cost_usd")} == {
            k: card[k] for k in ("turns", "tokens", "cost_usd")
        }
        assert card["turns"] > 0 and card["tokens"]["output"] > 0 and card["models"]
        if card["subagent_tokens"]:
            sub_agents_seen = True
            main = card["cost_usd"] - card["subagent_cost_usd"]
            assert card["main_cost_usd"] == pytest.approx(main, abs=2e-6)
            assert 0 < card["subagent_cost_usd"] < card["cost_usd"]
        assert card["id"] == sid and card["workspace"] == ws and card["epoch"] == snap["epoch"]
        assert card["transcript_path"] == str(file)
        changes = (await _get(client, f"{base}/changes", session=sid))["files"]
        assert [(f["path"], f["added"], f["removed"]) for f in card["files_changed"]] == [
            (f["path"], f["added"], f["removed"]) for f in changes
        ]
        first = next(i for i in items if i["type"] == "user" and not i["parent_tool_use_id"])
        assert card["first_prompt"]["id"] == first["id"]
        assert first["content"].startswith(card["first_prompt"]["text"][:100])
        assert card["duration_ms"] is not None and card["duration_ms"] >= 0
    assert sub_agents_seen  # the recorded sub-agent session's turns carry their part
    resp = await client.get(
        f"/workspace/{ws}/session/summary", params={"session": "nope"}, headers=AUTH
    )
    assert resp.status == 404
    await client.close()
