"""The Session tab at 420 px: search, the Changes view, the pinned plan and the filter chips fold
into one row above the timeline (folded by default, so the feed gets the room), opened from the
keyboard, announced as a disclosure, and remembered by the next panel; the timeline keeps 60 % of
the panel's height, folded or open. A real recorded Claude Code session."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from test_review_diffs import rich_server
from test_review_panel import open_session

from tests.e2e.support import panel_on
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.server import Server


def scroller_top(panel: Page) -> float:
    box = panel.locator(".session-tab .scroller").bounding_box()
    assert box is not None
    return float(box["y"])


def test_plan_and_chips_fold_into_one_row(ext: Extension, server: Server) -> None:
    panel = open_session(ext, server)
    panel.set_viewport_size({"width": 420, "height": 820})
    bar = panel.locator(".review-bar")
    toggle = bar.locator(".review-fold-toggle")
    expect(toggle).to_have_accessible_name(
        re.compile(r"^Search, changes · Plan \d+/\d+ · Filters$")
    )
    chips = panel.get_by_role("group", name="Show only")
    plan = panel.get_by_role("region", name="Current plan")

    # Folded by default: one row says what is folded; the chips and the plan are out of the way.
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(chips).to_be_hidden()
    expect(plan).to_be_hidden()
    folded = scroller_top(panel)

    # A disclosure reached from the keyboard: Enter opens what it controls.
    toggle.focus()
    panel.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    controls = toggle.get_attribute("aria-controls")
    assert controls
    expect(panel.locator(f"#{controls}")).to_be_visible()
    expect(chips).to_be_visible()
    expect(plan).to_be_visible()
    # Open, the feed starts lower by the plan and the chips (the room folding gives it).
    chips_box = chips.bounding_box()
    assert chips_box is not None
    assert scroller_top(panel) >= folded + chips_box["height"], (folded, scroller_top(panel))

    # A chip pressed, then folded with Space: the row says what the feed shows.
    chips.get_by_role("button", name="Edits").click()
    toggle.focus()
    panel.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_have_accessible_name(
        re.compile(r"^Search, changes · Plan \d+/\d+ · Showing edits$")
    )
    expect(chips).to_be_hidden()
    # Folded, the filters still speak (their live region is in the row, not in the fold).
    expect(bar.locator(".review-fold").get_by_role("status")).to_contain_text("Showing")
    bar.get_by_role("button", name="Next error").click()
    expect(bar.locator(".review-fold").get_by_role("status")).to_have_text(
        re.compile(r"^(Error|No error after this item)$")
    )

    # Remembered: opened here, the next panel opens with it open (filters are not remembered).
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    again = open_session(ext, server)
    reopened = again.locator(".review-bar .review-fold-toggle")
    expect(reopened).to_have_accessible_name(
        re.compile(r"^Search, changes · Plan \d+/\d+ · Filters$")
    )
    expect(reopened).to_have_attribute("aria-expanded", "true")
    expect(again.get_by_role("group", name="Show only")).to_be_visible()


def timeline_share(panel: Page) -> float:
    box = panel.locator(".session-tab .scroller").bounding_box()
    assert box is not None
    return float(box["height"]) / float(panel.evaluate("innerHeight"))


def test_the_timeline_keeps_sixty_percent_of_the_panel(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    # A recorded session whose edits touched many files: a long Changes list.
    panel = panel_on(ext, rich_server(server_factory, tmp_path))
    panel.set_viewport_size({"width": 420, "height": 820})
    bar = panel.locator(".review-bar")
    toggle = bar.locator(".review-fold-toggle")
    # Folded by default: search and Changes too are behind the one row.
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(panel.get_by_role("searchbox", name="Search text")).to_be_hidden()
    expect(panel.get_by_role("button", name="Changes", exact=True)).to_be_hidden()
    folded = timeline_share(panel)
    panel.screenshot(path=str(paths.SHOTS / "panel-fold" / "timeline-folded.png"))
    assert folded >= 0.6, folded

    # Open, with every tool shown (Changes listed), the tools scroll in their own room.
    toggle.click()
    panel.get_by_role("button", name="Changes", exact=True).click()
    files = panel.get_by_role("list", name="Files changed").locator("li")
    expect(files.first).to_be_visible()
    assert files.count() >= 5
    opened = timeline_share(panel)
    panel.screenshot(path=str(paths.SHOTS / "panel-fold" / "timeline-open.png"))
    assert opened >= 0.6, opened
    print(f"timeline share at 420x820: folded {folded:.0%}, open {opened:.0%}")

    # "/" reaches the search from anywhere in the tab, unfolding it.
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    panel.locator(".feed article").first.focus()
    panel.keyboard.press("/")
    expect(panel.get_by_role("searchbox", name="Search text")).to_be_focused()
