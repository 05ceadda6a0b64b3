"""Diffs at 420 px: a long line wraps at the panel's width (nothing scrolls sideways), the
no-wrap switch keeps it whole and scrolling, and the next panel remembers the choice. The
Changes view's edit chips carry a visible label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect
from session_card_data import LONG_LINE, SID, WS, session_events
from test_review_panel import open_review_tools

from tests.e2e.support import panel_on
from tests.harness import paths
from tests.harness.browser import Extension

SHOTS = paths.SHOTS / "diff-wrap"


def widths(el: Locator) -> tuple[int, int]:
    """(scrollWidth, clientWidth): wider content than box means it scrolls sideways."""
    got = el.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
    return int(got[0]), int(got[1])


def long_line(panel: Page) -> Locator:
    return panel.locator(".feed .diff-add .diff-text").filter(has_text=LONG_LINE.strip()[:20])


def test_a_long_diff_line_wraps_and_the_switch_keeps_it_whole(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    (tmp_path / "no-claude").mkdir()
    server = server_factory(claude=tmp_path / "no-claude")
    server.ingest(WS, SID, session_events())
    panel = panel_on(ext, server)
    panel.set_viewport_size({"width": 420, "height": 820})
    line = long_line(panel)
    expect(line).to_have_text(LONG_LINE[1:])
    hunk = panel.locator(".feed .diff-hunk").first
    line_height = float(line.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight)"))

    # Wrapped by default: the hunk fits the panel, the long line takes several rows.
    scroll, client = widths(hunk)
    assert scroll <= client, (scroll, client)
    assert (line.bounding_box() or {"height": 0})["height"] >= 2 * line_height
    toggle = panel.get_by_role("button", name="Wrap lines").first
    expect(toggle).to_have_attribute("aria-pressed", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "diff-wrapped.png"))

    # The switch: each line whole on one row, the hunk scrolls sideways.
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    scroll, client = widths(hunk)
    assert scroll > client, (scroll, client)
    assert (line.bounding_box() or {"height": 99})["height"] < 2 * line_height
    panel.screenshot(path=str(SHOTS / "diff-nowrap.png"))

    # Remembered: the next panel keeps the lines whole.
    again = panel_on(ext, server)
    again.set_viewport_size({"width": 420, "height": 820})
    expect(again.get_by_role("button", name="Wrap lines").first).to_have_attribute(
        "aria-pressed", "false"
    )
    assert (
        widths(again.locator(".feed .diff-hunk").first)[0]
        > widths(again.locator(".feed .diff-hunk").first)[1]
    )


def test_edit_chips_say_what_their_numbers_are(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    (tmp_path / "no-claude").mkdir()
    server = server_factory(claude=tmp_path / "no-claude")
    events = session_events()
    edit = next(e for e in events if e["type"] == "tool_use")
    again = {**edit, "tool_use_id": "toolu_card_edit_2"}
    server.ingest(WS, SID, [*events, again])
    panel = panel_on(ext, server)
    panel.set_viewport_size({"width": 420, "height": 820})
    open_review_tools(panel)  # search and Changes fold with the review tools
    panel.get_by_role("button", name="Changes", exact=True).click()
    group = panel.get_by_role("group", name="Edits to src/parser.py")
    expect(group).to_have_text("Edits12")
    expect(group.locator(".change-calls-label")).to_be_visible()
    expect(group.get_by_role("button", name="Edit 2 of 2 to src/parser.py")).to_be_visible()
