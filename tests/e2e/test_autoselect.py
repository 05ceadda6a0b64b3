"""What "Auto" shows: the session that changed last on this machine, in any project; the browser's
last action is a hint beside its workspace, never a reason to move; the demo is labelled so."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.e2e.support import (
    SHOWN,
    append_exchange,
    choose_session,
    open_tab,
    post_activity,
    sample_workspace,
    session_list,
    transcript,
)
from tests.harness.browser import Extension
from tests.harness.server import Server
from tests.harness.waiting import wait_until

NEW_PROJECT = "/tmp/e2e-auto-new-project"


def start_new_project(claude_dir: Path, answer: str) -> Path:
    """A new Claude Code session in another project, as the agent writes one: a transcript in a
    new project folder (the real fixture's lines, moved to NEW_PROJECT), then a fresh exchange."""
    session = str(uuid.uuid4())
    folder = claude_dir / NEW_PROJECT.replace("/", "-")
    folder.mkdir()
    lines = []
    for line in transcript(claude_dir).read_text().splitlines()[:6]:
        record = json.loads(line)
        record.update(cwd=NEW_PROJECT, sessionId=session)
        lines.append(json.dumps(record))
    path = folder / f"{session}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    append_exchange(path, "start the new project", answer)
    return path


def test_auto_follows_the_latest_change_and_the_browser_is_only_a_hint(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    shown = panel.locator(SHOWN)
    auto = shown.locator(".auto-badge")
    # Only the fixture's project (its transcript last written long ago): Auto shows it.
    expect(shown).to_contain_text("Demo", timeout=15_000)
    expect(auto).to_be_visible()
    expect(feed.locator("[data-item-id]").first).to_be_visible()
    # The rule is said where the user looks for it.
    tooltip = shown.get_attribute("title") or ""
    assert "changed last on this machine" in tooltip and "Pick a workspace" in tooltip

    # A new session starts in another project: it is listed and shown, without a click.
    path = start_new_project(claude_dir, "the new project's first answer")
    expect(feed.get_by_text("the new project's first answer")).to_be_visible()
    expect(shown).to_contain_text("e2e-auto-new-project")
    expect(auto).to_be_visible()

    # The fixture's agent acts in the browser: its workspace is marked, and Auto stays put.
    post_activity(server, {"type": "command_end", "command": "goto", "args": ["http://x.test"],
                           "workspace": "/path/to/Demo", "status": "ok"})  # fmt: skip
    dialog = session_list(panel)
    demo_row = dialog.locator(f'.sl-group[data-workspace="{sample_workspace(server)}"]')
    expect(demo_row.locator(".browser-hint")).to_have_text("in the browser")
    new_row = dialog.locator(".sl-group", has_text="e2e-auto-new-project")
    expect(new_row).to_be_visible()
    expect(new_row.locator(".browser-hint")).to_have_count(0)
    expect(dialog.locator(".sl-auto")).to_contain_text("now: e2e-auto-new-project")
    dialog.get_by_role("combobox").press("Escape")
    expect(shown).to_contain_text("e2e-auto-new-project")
    expect(feed.get_by_text("the new project's first answer")).to_be_visible()
    expect(panel.locator(".session-line .chip.browser-hint")).to_be_hidden()

    # The shown project's agent acts in the browser: the badge says so, on its timeline.
    post_activity(server, {"type": "command_end", "command": "click", "args": ["e1"],
                           "workspace": NEW_PROJECT, "status": "ok"})  # fmt: skip
    hint = panel.locator(".session-line .chip.browser-hint")
    expect(hint).to_have_text("in browser")
    assert "acted in the browser" in (hint.get_attribute("title") or "")

    # The next change in the old project brings Auto back to it (the new one is quiet by now).
    append_exchange(transcript(claude_dir), "back to the sample", "the sample project answers")
    expect(feed.get_by_text("the sample project answers")).to_be_visible()
    expect(shown).to_contain_text("Demo")
    expect(auto).to_be_visible()

    # Chosen by hand, a workspace stays: a change elsewhere moves nothing.
    choose_session(panel, "/path/to/Demo", workspace=True)
    expect(auto).to_be_hidden()
    append_exchange(path, "more", "a later answer in the new project")
    wait_until(lambda: server.workspaces()[0]["directory"] == NEW_PROJECT,
               what="the new project is the latest on the server")  # fmt: skip
    # The panel has seen it (the list's Auto row names it), and still shows the one chosen.
    dialog = session_list(panel)
    expect(dialog.locator(".sl-auto")).to_contain_text("now: e2e-auto-new-project")
    dialog.get_by_role("combobox").press("Escape")
    expect(feed.get_by_text("the sample project answers")).to_be_visible()
    expect(feed.get_by_text("a later answer in the new project")).to_have_count(0)
    expect(shown).to_contain_text("Demo")
    expect(auto).to_be_hidden()


def test_auto_catches_up_with_what_changed_while_another_tab_was_shown(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    """The Session tab stops asking the server while another tab is shown (its stream goes on);
    shown again on Auto, it moves to the session that changed meanwhile."""
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    shown = panel.locator(SHOWN)
    expect(shown).to_contain_text("Demo", timeout=15_000)
    open_tab(panel, "Sessions")
    start_new_project(claude_dir, "written while the Sessions view was shown")
    expect(panel.locator(".session-row", has_text="e2e-auto-new-project")).to_be_visible()
    open_tab(panel, "Session")
    expect(shown).to_contain_text("e2e-auto-new-project")
    feed = panel.locator(".feed")
    expect(feed.get_by_text("written while the Sessions view was shown")).to_be_visible()
    expect(shown.locator(".auto-badge")).to_be_visible()


def test_the_demo_is_labelled_demo_and_says_so(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    empty = tmp_path / "no-sessions"
    empty.mkdir()
    server = server_factory(claude=empty, extra_args=("--demo",))
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    shown = panel.locator(SHOWN)
    expect(shown).to_contain_text("Demo", timeout=15_000)
    expect(shown.locator(".auto-badge")).to_be_visible()
    dialog = session_list(panel)
    expect(dialog.locator(".sl-group .sl-ws")).to_have_text(["Demo"])
    dialog.get_by_role("combobox").press("Escape")
    banner = panel.locator(".demo-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Demo: a recorded session replayed")
