"""The Activity tab against a real server: pairing, status, duration, filter, details, gap."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.support import open_tab, post_activity
from tests.harness.browser import Extension
from tests.harness.server import Server
from tests.harness.waiting import wait_until

WS = "/tmp/sidemirror-e2e-activity"
URL = "http://127.0.0.1:5173/login?next=%2Fhome"


def open_activity(ext: Extension, server: Server) -> Page:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    open_tab(panel, "Activity")
    return panel


def test_commands_pair_in_place_with_status_duration_and_errors(
    ext: Extension, server: Server
) -> None:
    panel = open_activity(ext, server)
    expect(panel.get_by_role("heading", name="No browser activity yet")).to_be_visible()
    rows = panel.locator(".act-list > li")

    post_activity(server, {"request_id": "r1", "type": "command_start", "command": "goto",
                           "args": [URL], "url": URL, "workspace": WS})  # fmt: skip
    expect(rows).to_have_count(1, timeout=10_000)
    expect(rows.first).to_have_attribute("data-category", "pending")
    expect(rows.first.locator(".act-status.pending")).to_be_visible()
    expect(rows.first.locator(".act-cmd")).to_have_text("goto")

    # The end replaces the pending start in place: still one row, now ✓ with its duration.
    post_activity(server, {"request_id": "r1", "type": "command_end", "command": "goto",
                           "args": [URL], "url": URL, "workspace": WS, "status": "ok",
                           "duration_ms": 412})  # fmt: skip
    expect(rows.first).to_have_attribute("data-category", "navigation")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".act-status.ok .mark")).to_have_text("✓")
    expect(rows.first.locator(".act-status .dur")).to_have_text("412 ms")

    post_activity(
        server,
        [
            {"request_id": "r2", "type": "command_start", "command": "click", "args": ["e5"],
             "url": URL, "workspace": WS},
            {"request_id": "r2", "type": "command_end", "command": "click", "args": ["e5"],
             "url": URL, "workspace": WS, "status": "ok", "duration_ms": 0},
            {"request_id": "r3", "type": "command_start", "command": "fill",
             "args": ["#email", "me@example.com"], "url": URL, "workspace": WS},
            {"request_id": "r3", "type": "command_end", "command": "fill",
             "args": ["#email", "me@example.com"], "url": URL, "workspace": WS, "status": "error",
             "duration_ms": 5003, "error": "Timeout 5000ms exceeded waiting for #email"},
            {"type": "command_end", "command": "snapshot", "url": URL, "workspace": WS,
             "status": "ok", "duration_ms": 35, "result": "- button \"Sign in\" [ref=e5]"},
        ],
    )  # fmt: skip
    expect(rows).to_have_count(4, timeout=10_000)
    click, fill, snap = rows.nth(1), rows.nth(2), rows.nth(3)
    expect(click).to_have_attribute("data-category", "interaction")
    expect(click.locator(".act-status .dur")).to_have_text("0 ms")  # zero is a duration too
    expect(click.locator(".act-args")).to_have_text("e5")
    expect(fill).to_have_attribute("data-category", "error")
    expect(fill.locator(".act-status.error .mark")).to_have_text("✗")
    expect(fill.locator(".act-status .dur")).to_have_text("5.0 s")
    expect(fill.locator(".act-error")).to_have_text("Timeout 5000ms exceeded waiting for #email")
    # The typed value was redacted by the server before it reached the panel.
    expect(fill.locator(".act-args")).to_have_text("#email [REDACTED:typed]")
    expect(snap).to_have_attribute("data-category", "observation")
    expect(panel.locator(".act-count")).to_have_text("4 entries")

    # Details: click and keyboard (Enter / Space) toggle, with aria-expanded.
    summary = snap.locator(".act-summary")
    expect(summary).to_have_attribute("aria-expanded", "false")
    summary.click()
    expect(summary).to_have_attribute("aria-expanded", "true")
    details = snap.locator(".act-details")
    expect(details).to_be_visible()
    expect(details).to_contain_text(URL)
    expect(details).to_contain_text('button "Sign in" [ref=e5]')
    summary.press("Enter")
    expect(summary).to_have_attribute("aria-expanded", "false")
    expect(details).to_be_hidden()
    fill.locator(".act-summary").focus()
    panel.keyboard.press("Space")
    expect(fill.locator(".act-summary")).to_have_attribute("aria-expanded", "true")
    expect(fill.locator(".act-details")).to_contain_text("5.0 s")

    # The filter matches command, args and URL.
    box = panel.get_by_label("Filter activity")
    box.fill("fill")
    expect(rows.filter(visible=True)).to_have_count(1)
    expect(rows.filter(visible=True).first.locator(".act-cmd")).to_have_text("fill")
    expect(panel.locator(".act-count")).to_have_text("1 of 4 entries")
    box.fill("e5")
    expect(rows.filter(visible=True)).to_have_count(1)
    box.fill("login?next")  # URL text
    expect(rows.filter(visible=True)).to_have_count(4)
    box.fill("no such thing")
    expect(rows.filter(visible=True)).to_have_count(0)
    expect(panel.locator(".act-nomatch")).to_have_text(re.compile("No entries match"))
    box.fill("")
    expect(rows.filter(visible=True)).to_have_count(4)

    # A live entry arriving while scrolled to the bottom stays in view.
    post_activity(server, {"type": "navigation", "command": "navigate", "url": URL + "#done",
                           "workspace": WS})  # fmt: skip
    expect(rows).to_have_count(5, timeout=10_000)
    expect(rows.last).to_have_attribute("data-category", "navigation")
    expect(rows.last).to_be_in_viewport()


def test_gap_banner_when_the_cursor_fell_out_of_the_ring(ext: Extension, server: Server) -> None:
    panel = open_activity(ext, server)
    post_activity(server, [{"type": "command_end", "command": "click", "args": [f"e{i}"],
                            "workspace": WS, "status": "ok", "duration_ms": i}
                           for i in range(3)])  # fmt: skip
    rows = panel.locator(".act-list > li")
    expect(rows).to_have_count(3, timeout=10_000)

    # Pausing disconnects the stream; 1,100 entries later its cursor is out of the 1,000 ring.
    pause = panel.get_by_role("button", name="Pause")
    pause.click()
    expect(panel.get_by_role("button", name="Resume")).to_have_attribute("aria-pressed", "true")
    result = post_activity(server, [{"type": "command_end", "command": "scroll",
                                     "args": [str(i)], "workspace": WS, "status": "ok"}
                                    for i in range(1100)])  # fmt: skip
    assert result["accepted"] == 1100
    panel.wait_for_timeout(300)
    expect(rows).to_have_count(3)  # paused: nothing new arrived
    panel.get_by_role("button", name="Resume").click()

    banner = panel.locator(".gap-banner")
    expect(banner).to_be_visible(timeout=30_000)
    expect(banner).to_contain_text("Missed 100 events")
    # What the ring still held arrived after the gap; the DOM stays capped.
    expect(rows.last.locator(".act-args")).to_have_text("1099", timeout=30_000)
    # Rows arrive in batches and the cap trims after each: wait for the settled count.
    expect(rows).to_have_count(1000, timeout=30_000)
    ids = panel.eval_on_selector_all(".act-list > li", "els => els.map((e) => e.dataset.id)")
    assert len(set(ids)) == len(ids)
    banner.get_by_role("button", name="Dismiss").click()
    expect(banner).to_be_hidden()

    # Live again after the resume.
    post_activity(server, {"type": "command_end", "command": "hover", "args": ["e9"],
                           "workspace": WS, "status": "ok"})  # fmt: skip
    expect(rows.last.locator(".act-cmd")).to_have_text("hover", timeout=10_000)
    wait_until(lambda: rows.count() == 1000, what="still capped")

    # Scrolled up, the list does not jump: a pill counts what arrived below.
    scroller = panel.locator(".act-scroller")
    # The browser fires the scroll event at its next frame; dispatching one now means the panel
    # knows the user is away from the bottom before the next entry arrives.
    scroller.evaluate("(s) => { s.scrollTop = 0; s.dispatchEvent(new Event('scroll')); }")
    post_activity(server, {"type": "command_end", "command": "press", "args": ["Enter"],
                           "workspace": WS, "status": "ok"})  # fmt: skip
    pill = panel.locator(".activity-tab .pill")
    expect(pill).to_have_text("1 new entry", timeout=10_000)
    assert scroller.evaluate("(s) => s.scrollTop") == 0
    pill.click()
    expect(pill).to_be_hidden()
    expect(rows.last).to_be_in_viewport()


def test_blank_tabs_and_the_extensions_own_pages_are_left_out(
    ext: Extension, server: Server
) -> None:
    panel = open_activity(ext, server)
    own = ext.url("sidepanel/sidepanel.html")
    post_activity(
        server,
        [  # what observe-cdp reports of a browser where the side panel is open
            {"type": "navigation", "command": "tab.open", "args": ["about:blank"],
             "url": "about:blank", "workspace": WS},
            {"type": "navigation", "command": "navigate", "args": [own], "url": own,
             "workspace": WS},
            {"type": "console", "command": "console.error", "args": ["boom"], "url": own,
             "workspace": WS},
            {"type": "command_end", "command": "goto", "args": [URL], "url": "about:blank",
             "workspace": WS, "status": "ok", "duration_ms": 80},
        ],
    )  # fmt: skip
    rows = panel.locator(".act-list > li")
    expect(rows.first.locator(".act-cmd")).to_have_text("goto", timeout=10_000)
    expect(rows).to_have_count(1)  # the goto from a blank tab names a real page: kept
    expect(panel.locator(".act-count")).to_have_text("1 entry")
