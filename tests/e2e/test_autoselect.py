"""What "Auto" shows: the session that changed last on this machine, in any project; the browser's
last action is a hint beside its workspace, never a reason to move; the demo is labelled so."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.e2e.support import append_exchange, post_activity, sample_workspace, transcript
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
    auto = panel.locator("#ws-select option[value='']")
    # Only the fixture's project (its transcript last written long ago): Auto shows it.
    expect(auto).to_have_text("Auto — Demo", timeout=15_000)
    expect(feed.locator("[data-item-id]").first).to_be_visible()
    # The rule is said where the user looks for it.
    tooltip = panel.locator("#ws-select").get_attribute("title") or ""
    assert "changed last on this machine" in tooltip and "Pick a workspace" in tooltip

    # A new session starts in another project: it is listed and shown, without a click.
    path = start_new_project(claude_dir, "the new project's first answer")
    expect(
        panel.locator("#ws-select option:not([value=''])", has_text="e2e-auto-new-project")
    ).to_be_attached()
    expect(feed.get_by_text("the new project's first answer")).to_be_visible()
    expect(auto).to_have_text("Auto — e2e-auto-new-project")
    assert panel.locator("#ws-select").input_value() == ""

    # The fixture's agent acts in the browser: its workspace is marked, and Auto stays put.
    post_activity(server, {"type": "command_end", "command": "goto", "args": ["http://x.test"],
                           "workspace": "/path/to/Demo", "status": "ok"})  # fmt: skip
    demo_option = panel.locator(f"#ws-select option[value='{sample_workspace(server)}']")
    expect(demo_option).to_have_text(re.compile(r"^Demo \(.*in the browser\)$"))
    expect(auto).to_have_text("Auto — e2e-auto-new-project")
    expect(feed.get_by_text("the new project's first answer")).to_be_visible()
    expect(panel.locator(".chip.browser-hint")).to_be_hidden()

    # The shown project's agent acts in the browser: the badge says so, on its timeline.
    post_activity(server, {"type": "command_end", "command": "click", "args": ["e1"],
                           "workspace": NEW_PROJECT, "status": "ok"})  # fmt: skip
    expect(panel.locator(".chip.browser-hint")).to_have_text("Agent active in the browser")

    # The next change in the old project brings Auto back to it (the new one is quiet by now).
    append_exchange(transcript(claude_dir), "back to the sample", "the sample project answers")
    expect(feed.get_by_text("the sample project answers")).to_be_visible()
    expect(auto).to_have_text("Auto — Demo")

    # Picked by hand, a workspace stays: a change elsewhere moves nothing.
    panel.locator("#ws-select").select_option(sample_workspace(server))
    append_exchange(path, "more", "a later answer in the new project")
    wait_until(lambda: server.workspaces()[0]["directory"] == NEW_PROJECT,
               what="the new project is the latest on the server")  # fmt: skip
    # The panel has seen it (Auto's label names it), and still shows the workspace picked.
    expect(auto).to_have_text("Auto — e2e-auto-new-project")
    expect(feed.get_by_text("the sample project answers")).to_be_visible()
    expect(feed.get_by_text("a later answer in the new project")).to_have_count(0)
    assert panel.locator("#ws-select").input_value() == sample_workspace(server)


def test_the_demo_is_labelled_demo_and_says_so(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    empty = tmp_path / "no-sessions"
    empty.mkdir()
    server = server_factory(claude=empty, extra_args=("--demo",))
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator("#ws-select option[value='']")).to_have_text("Auto — Demo", timeout=15_000)
    expect(panel.locator("#ws-select option:not([value=''])").first).to_have_text(
        re.compile(r"^Demo( \(.*\))?$")
    )
    banner = panel.locator(".demo-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Demo: a recorded session replayed")
