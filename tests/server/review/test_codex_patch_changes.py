"""A Codex patch of several files, seen through a real server: the tool call's item carries every
file's diff and the session's Changes route lists every file.

The session is the real recorded rollout (tests/fixtures/codex) with, appended as Codex writes
it, an `apply_patch` call of four files in the format Codex's tool instructions give (no recorded
rollout we hold has a patch of more than one file: see tests/unit/sources/codex/
test_multi_file_patch.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.harness.paths import FIXTURES
from tests.server.sources.test_removed_files import _json, _until, _workspaces
from tests.server.support import ClientFactory
from tests.unit.sources.codex.test_multi_file_patch import PATCH

CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
CALL = "call_multiFilePatch0001"


def patch_lines(ts: str) -> bytes:
    call = {"type": "custom_tool_call", "name": "apply_patch", "call_id": CALL, "input": PATCH}
    out = {"type": "custom_tool_call_output", "call_id": CALL, "output": "Exit code: 0\n"}
    return b"".join(
        json.dumps({"timestamp": ts, "type": "response_item", "payload": p}).encode() + b"\n"
        for p in (call, out)
    )


def codex_home_with_patch(home: Path) -> Path:
    """A Codex home whose one rollout is the recorded one with the patch appended."""
    rollout = home / "sessions" / "2026" / "05" / "11" / CODEX.name
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(CODEX.read_bytes() + patch_lines("2026-05-11T11:49:00.000Z"))
    return home


async def test_a_patch_of_several_files_shows_each_and_changes_list_them_all(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client = await make_client(codex_dir=codex_home_with_patch(tmp_path / "codex"))
    (ws,) = await _until(lambda: _workspaces(client))
    (listed,) = (await _json(client, f"/workspace/{ws['id']}/sessions"))["sessions"]
    sid = listed["id"]

    snap = await _json(client, f"/workspace/{ws['id']}/session?session={sid}&limit=10000")
    (use,) = [i for i in snap["items"] if i.get("tool_use_id") == CALL and i["type"] == "tool_use"]
    paths = ["docs/notes.md", "src/app.py", "src/old_name.py", "src/unused.py"]
    assert [d["path"] for d in use["diffs"]] == paths
    assert use["diff"] == use["diffs"][0]
    assert [(d["added"], d["removed"]) for d in use["diffs"]] == [(3, 0), (2, 2), (1, 1), (0, 0)]

    changes = await _json(client, f"/workspace/{ws['id']}/session/changes?session={sid}")
    by_path: dict[str, Any] = {f["path"]: f for f in changes["files"]}
    assert list(by_path)[-4:] == paths  # every file, in the order first touched
    for diff in use["diffs"]:
        entry = by_path[diff["path"]]
        assert entry["tool_use_ids"][-1] == CALL and entry["item_ids"][-1] == use["id"]
        assert (entry["added"], entry["removed"]) == (diff["added"], diff["removed"])

    # "Open the whole change": the item route gives every file's hunks whole.
    resp = await client.get(
        f"/workspace/{ws['id']}/session/items/{use['id']}", params={"session": sid}, headers=AUTH
    )
    assert resp.status == 200
    whole = await resp.json()
    assert [d["path"] for d in whole["diffs"]] == paths
    await client.close()
