"""A filter chip that matches nothing says so in the timeline, and stops saying so the moment
a matching item arrives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_review_panel import open_review_tools

from tests.harness.browser import Extension

WS = "/tmp/e2e-filter-empty"


def test_an_empty_filter_result_says_so(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    (tmp_path / "no-claude").mkdir()
    server = server_factory(claude=tmp_path / "no-claude")
    server.ingest(WS, "calm", [
        {"type": "user", "content": "Rename the flag"},
        {"type": "assistant", "content": "Renamed it in cli.py."},
        {"type": "turn_complete", "turn": 1, "status": "ok"},
    ])  # fmt: skip
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=assistant]")).to_contain_text("Renamed it", timeout=20_000)
    open_review_tools(panel)
    chips = panel.get_by_role("group", name="Show only")

    chips.get_by_role("button", name="Errors").click()
    note = panel.locator(".filter-empty")
    expect(note).to_be_visible()
    expect(note).to_have_text("No items match “errors” (of 3 loaded).")
    expect(note).to_have_attribute("role", "status")  # read out, not only seen
    expect(feed).to_be_hidden()

    # An error arrives live: it is shown, and the note goes.
    server.ingest(WS, "calm", [{"type": "error", "message": "API overloaded"}])
    expect(feed.locator("[data-type=error]")).to_contain_text("API overloaded", timeout=10_000)
    expect(note).to_be_hidden()

    # Back to everything: no note either.
    chips.get_by_role("button", name="All").click()
    expect(feed.locator("[data-type=user]")).to_contain_text(re.compile("Rename the flag"))
    expect(note).to_be_hidden()
