"""An edit's `diff` on the wire and whole, and a session's Changes: every file its edits
touched, from a real recorded Claude Code session served from a followed transcript."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sidemirror.sources.diffs import claude_tool_diff

from tests.harness.auth import AUTH
from tests.harness.paths import FIXTURES
from tests.server.sources.claude.test_tail_load import wait_listed
from tests.server.support import ClientFactory
from tests.unit.sources.test_diffs import recorded_tool_calls

SESSION = FIXTURES / "claude" / "sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit")


def recorded_edits() -> list[dict[str, Any]]:
    return list(recorded_tool_calls(*EDITS, paths=[SESSION]))


async def test_changes_list_every_file_the_recorded_session_edited(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    shutil.copyfile(SESSION, project / SESSION.name)
    client = await make_client(claude_dirs=[tmp_path / "projects"], max_chars=200)
    await wait_listed(client)
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]
    base = f"/workspace/{ws['id']}/session"
    resp = await client.get(f"{base}/changes", params={"session": SESSION.stem}, headers=AUTH)
    assert resp.status == 200
    changes = await resp.json()

    edits = recorded_edits()
    expected: dict[str, list[str]] = {}
    for block in edits:
        expected.setdefault(block["input"]["file_path"], []).append(block["id"])
    assert len(expected) >= 5
    assert {f["path"]: f["tool_use_ids"] for f in changes["files"]} == expected

    snap = await (
        await client.get(base, params={"session": SESSION.stem, "limit": "10000"}, headers=AUTH)
    ).json()
    by_id = {i["id"]: i for i in snap["items"]}
    for entry in changes["files"]:
        added = removed = 0
        for item_id, tool_use_id in zip(entry["item_ids"], entry["tool_use_ids"], strict=True):
            shown = by_id[item_id]
            assert shown["tool_use_id"] == tool_use_id and shown["diff"]["path"] == entry["path"]
            # The wire carries the hunks cut to --max-chars; the item route gives them whole.
            lines = [x for h in shown["diff"]["hunks"] for x in h["lines"]]
            assert sum(map(len, lines)) <= 200
            resp = await client.get(f"{base}/items/{item_id}", headers=AUTH)
            whole = (await resp.json())["diff"]
            block = next(b for b in recorded_edits() if b["id"] == tool_use_id)
            recomputed = claude_tool_diff(block["name"], block["input"])
            assert recomputed is not None and whole == recomputed.model_dump(mode="json")
            assert shown["diff"]["truncated"] == (shown["diff"]["hunks"] != whole["hunks"])
            added += whole["added"]
            removed += whole["removed"]
        assert (entry["added"], entry["removed"]) == (added, removed)
    # An unknown session is a 404 like every session route.
    resp = await client.get(f"{base}/changes", params={"session": "nope"}, headers=AUTH)
    assert resp.status == 404
    await client.close()
