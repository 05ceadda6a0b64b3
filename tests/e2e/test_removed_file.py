"""A transcript deleted while the panel shows it: the panel says "ended · file removed" (and
keeps what it shows); the session's workspace leaves the picker."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from support import FIXTURES, SAMPLE_SESSION, Extension


def test_deleting_the_transcript_ends_the_session_in_the_panel(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    only = tmp_path / "only-claude"
    shutil.copytree(FIXTURES / "claude" / "sample-project", only / "sample-project")
    server = server_factory(claude=only)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=tool_use]").first).to_be_visible(timeout=15_000)
    shown = feed.locator("[data-type]").count()

    (only / "sample-project" / f"{SAMPLE_SESSION}.jsonl").unlink()
    expect(panel.locator(".session-state")).to_have_text("ended · file removed", timeout=5_000)
    assert feed.locator("[data-type]").count() == shown  # what was read stays readable
    assert server.workspaces() == []
