"""Diffs on edit cards and the session's Changes view (issue 16, `diffs`), on a real recorded
Claude Code session whose sub-agent edits files; and search across every session."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_review_panel import open_review_tools

from tests.e2e.support import (
    RICH_ID,
    SHOWN,
    copy_rich_session,
    panel_on,
    rich_server,
    sample_workspace,
)
from tests.harness.browser import Extension
from tests.harness.waiting import wait_until


def test_an_edit_shows_its_diff_and_changes_jump_to_it(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    server = rich_server(server_factory, tmp_path)
    # The server listens before it has indexed the archive: wait for the listing.
    ws = wait_until(server.workspaces, 30, what="the workspace listed")[0]["id"]
    items = server.snapshot(ws, RICH_ID, limit=5000)["items"]
    edit = next(
        i for i in items if i["type"] == "tool_use" and i.get("diff") and i["name"] == "Edit"
    )
    diff = edit["diff"]
    assert diff["added"] + diff["removed"] > 0
    panel = panel_on(ext, server)

    # The Changes view lists every file with its net lines, as the server counts them.
    changes = server.get(f"/workspace/{ws}/session/changes?session={RICH_ID}")["files"]
    assert changes
    open_review_tools(panel)  # search and Changes fold with the review tools
    panel.get_by_role("button", name="Changes", exact=True).click()
    files = panel.get_by_role("list", name="Files changed")
    expect(files.locator(".change-file")).to_have_count(len(changes))
    row = files.locator(".change-file").filter(has_text=diff["path"]).first
    entry = next(f for f in changes if f["path"] == diff["path"])
    expect(row.locator(".change-path")).to_contain_text(f"+{entry['added']} −{entry['removed']}")

    # Choosing a file jumps to the tool call that changed it (nested in a sub-agent here).
    k = entry["item_ids"].index(edit["id"])
    if len(entry["item_ids"]) > 1:
        row.get_by_role("button", name=f"Edit {k + 1} of {len(entry['item_ids'])}").click()
    else:
        row.locator(".change-path").click()
    card = panel.locator(f".feed article[data-item-id='{edit['id']}']")
    expect(card).to_be_in_viewport(timeout=20_000)
    expect(card).to_be_focused()

    # The card shows the change: path, +N −M, red and green lines, collapsible.
    block = card.locator("details.diff")
    expect(block.locator(".diff-path")).to_have_text(diff["path"])
    expect(block.locator(".diff-stats")).to_have_text(f"+{diff['added']} −{diff['removed']}")
    first_hunk = diff["hunks"][0]["lines"]
    adds = [line[1:] for line in first_hunk if line.startswith("+")]
    dels = [line[1:] for line in first_hunk if line.startswith("-")]
    if adds:
        expect(block.locator(".diff-add").first).to_contain_text(adds[0].strip() or " ")
    if dels:
        expect(block.locator(".diff-del").first).to_contain_text(dels[0].strip() or " ")
    changed = sum(1 for h in diff["hunks"] for line in h["lines"] if line[:1] in "+-")
    expect(block.locator(".diff-add, .diff-del")).to_have_count(changed)
    if diff.get("truncated"):
        # The hunks came capped: the whole change opens from the full item.
        full = server.get(f"/workspace/{ws}/session/items/{edit['id']}")["diff"]
        whole = sum(1 for h in full["hunks"] for line in h["lines"] if line[:1] in "+-")
        block.get_by_role("button", name="Open the whole change").click()
        expect(block.locator(".diff-add, .diff-del")).to_have_count(whole)
    block.locator("summary").click()
    expect(block.locator(".diff-body")).to_be_hidden()
    block.locator("summary").click()
    expect(block.locator(".diff-body")).to_be_visible()


def test_search_across_sessions_switches_to_the_hit(
    ext: Extension, server_factory: Any, tmp_path: Path, claude_dir: Path
) -> None:
    # Two workspaces: the sample session and the rich one.
    copy_rich_session(claude_dir / "rich-project")
    server = server_factory()
    panel = panel_on(ext, server)
    assert sample_workspace(server)

    # A word the session not shown says (the panel shows the latest session).
    shown = server.get(f"/workspace/{sample_workspace(server)}/sessions")["sessions"][0]["id"]

    def other_session_word() -> tuple[str, list[dict[str, Any]]] | None:
        # The index fills in the background: wait until a word of the other session is in it.
        for w in ("instances", "empty", "CLAUDE", "directory", "README"):
            found = server.get(f"/api/search?q={w}&limit=50")["hits"]
            if any(h["session"] != shown for h in found):
                return w, found
        return None

    word, hits = wait_until(other_session_word, timeout=30, what="the other session indexed")
    open_review_tools(panel)  # search and Changes fold with the review tools
    box = panel.get_by_role("searchbox", name="Search text")
    box.focus()
    panel.get_by_label("Search in").select_option("all")
    box.fill(word)
    results = panel.get_by_role("list", name="Search results")
    expect(results.get_by_role("button")).to_have_count(len(hits), timeout=20_000)
    # Hits say where they are (workspace · session).
    expect(results.locator(".hit-where").first).to_contain_text("Demo")
    # A hit in the other session: the panel switches to it and shows the item.
    other = next(h for h in hits if h["session"] != shown)
    results.get_by_role("button").nth(hits.index(other)).click()
    target = panel.locator(f".feed [data-item-id='{other['item_id']}']")
    expect(target.first).to_be_visible(timeout=30_000)
    # The header names the session shown (its id in the tooltip).
    expect(panel.locator(SHOWN)).to_have_attribute("title", re.compile(re.escape(other["session"])))
