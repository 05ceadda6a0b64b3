"""A Codex patch of several files on its tool card: one diff block a file (issue 16, `diffs`).

The session is the real recorded Codex rollout with a four-file `apply_patch` call appended in
Codex's format (see tests/unit/sources/codex/test_multi_file_patch.py for why it is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.harness.browser import Extension
from tests.harness.waiting import wait_until
from tests.server.review.test_codex_patch_changes import CALL, codex_home_with_patch


def test_each_file_of_a_patch_shows_its_diff(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    codex = codex_home_with_patch(tmp_path / "codex-home")
    empty_claude = tmp_path / "no-claude"
    empty_claude.mkdir()
    server = server_factory(claude=empty_claude, extra_args=("--codex-dir", str(codex)))
    ws = wait_until(server.workspaces, 30, what="the workspace listed")[0]["id"]
    sid = server.get(f"/workspace/{ws}/sessions")["sessions"][0]["id"]
    use = next(
        i
        for i in server.snapshot(ws, sid, limit=5000)["items"]
        if i.get("tool_use_id") == CALL and i["type"] == "tool_use"
    )

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    card = panel.locator(f".feed article[data-item-id='{use['id']}']")
    expect(card).to_be_attached(timeout=20_000)
    card.scroll_into_view_if_needed()
    blocks = card.locator("details.diff")
    expect(blocks).to_have_count(len(use["diffs"]))
    for block, diff in zip(blocks.all(), use["diffs"], strict=True):
        expect(block.locator(".diff-path")).to_have_text(diff["path"])
        expect(block.locator(".diff-stats")).to_have_text(f"+{diff['added']} −{diff['removed']}")
        changed = sum(1 for h in diff["hunks"] for line in h["lines"] if line[:1] in "+-")
        expect(block.locator(".diff-add, .diff-del")).to_have_count(changed)
