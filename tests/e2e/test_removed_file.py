"""A transcript deleted while the panel shows it: the panel says "ended · file removed" (and
keeps what it shows); the session's workspace leaves the picker."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.e2e.support import FIXTURES, SAMPLE_SESSION
from tests.harness.browser import Extension


def test_deleting_the_transcript_ends_the_session_in_the_panel(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    only = tmp_path / "only-claude"
    shutil.copytree(FIXTURES / "claude" / "sample-project", only / "sample-project")
    server = server_factory(claude=only)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    card = feed.locator("[data-type=tool_use]").first
    expect(card).to_be_visible(timeout=15_000)
    # The timeline keeps only rows near the viewport in the DOM and adds the rest when idle, so
    # what stays readable is checked on an item the user sees, not on a count of DOM rows.
    item_id = card.get_attribute("data-item-id")

    (only / "sample-project" / f"{SAMPLE_SESSION}.jsonl").unlink()
    expect(panel.locator(".session-state")).to_have_text("ended · file removed")
    expect(feed.locator(f"[data-item-id='{item_id}']")).to_be_visible()  # still readable
    assert server.workspaces() == []
