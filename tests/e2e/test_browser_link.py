"""browser-link in the side panel: a recorded Claude session's Playwright calls show what the
browser did meanwhile, and an Activity row leads back to the call that caused it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_a11y import serious

from tests.e2e.support import AXE_JS, open_tab, post_activity
from tests.harness.browser import Extension
from tests.harness.waiting import wait_until
from tests.server.helpers.browser_session import (
    CALLS,
    activity_body,
    session_base,
    write_transcript,
)


def test_tool_card_summary_and_activity_back_link(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    projects = tmp_path / "browser-claude"
    base = session_base()
    write_transcript(projects, base)
    server = server_factory(claude=projects)
    wait_until(lambda: server.workspaces(), what="the transcript is indexed")
    post_activity(server, activity_body(base))

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    panel.add_init_script(path=str(AXE_JS))  # axe-core, to check what this test shows
    panel.reload()
    cards = panel.locator("article.tool")
    expect(cards).to_have_count(len(CALLS))
    nav = cards.filter(has_text="http://localhost:3000/dashboard")
    line = nav.locator(".browser-summary-line")
    expect(line).to_have_text("→ /dashboard · 2 console errors · 1 failed request")
    # Errors seen in the browser mark the card.
    expect(nav).to_have_class(re.compile(r"\bbrowser-errors\b"))
    expect(nav.get_by_role("img", name="3 errors in the browser")).to_be_visible()
    # The line opens into the linked entries.
    entries = nav.locator(".browser-entry")
    expect(entries.first).to_be_hidden()
    expect(line).to_have_attribute("aria-expanded", "false")
    line.click()
    expect(line).to_have_attribute("aria-expanded", "true")
    expect(entries).to_have_count(4)
    expect(entries.first).to_be_visible()
    expect(entries.nth(2)).to_contain_text("HTTP 500 Internal Server Error")
    expect(entries.nth(2)).to_contain_text("POST http://localhost:3000/api/session")
    assert serious(panel.evaluate("async () => (await axe.run(document)).violations")) == []
    # A browser call with nothing wrong: no mark; an Edit card: no summary at all.
    settings = cards.filter(has_text="http://localhost:3000/settings")
    expect(settings.locator(".browser-summary-line")).to_have_text("→ /settings · 1 page error")
    edit = cards.filter(has_text="login.js")
    expect(edit.locator(".tool-status.ok")).to_be_visible()
    expect(edit.locator(".browser-summary")).to_have_count(0)

    # The Activity tab: the error the click caused names the click, and leads back to it.
    open_tab(panel, "Activity")
    row = panel.locator(".act-list > li").filter(has_text="Login failed")
    back = row.get_by_role("button", name="from Claude: click e5 · turn 1")
    expect(back).to_be_visible()
    unlinked = panel.locator(".act-list > li").filter(has_text="between calls")
    expect(unlinked).to_have_count(1)
    expect(unlinked.locator(".act-backlink")).to_have_count(0)
    assert serious(panel.evaluate("async () => (await axe.run(document)).violations")) == []
    back.click()
    expect(panel.get_by_role("tab", name="Session", exact=True)).to_have_attribute(
        "aria-selected", "true"
    )
    click_card = cards.filter(has=panel.locator(".tool-name", has_text="browser_click"))
    expect(click_card).to_be_focused()
    expect(click_card.locator(".browser-summary-line")).to_have_text(
        "→ /login · 1 console error · 1 failed request"
    )
