"""The timeline's keys (issue 33): j/k/g/G/Enter/e wherever focus is in the timeline (a clicked
Thinking row's summary too), `g` at the first item of the SESSION (a 12,000-line transcript: one
action, a bounded number of requests, not 87 pages back), the latest items again with `G`, and
the keys listed in a `?` dialog that Escape closes. A real server and the real extension."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.support import (
    SAMPLE_SESSION,
    append_exchange,
    panel_on,
    sample_workspace,
    transcript,
)
from tests.e2e.test_review_history import REAL
from tests.harness.browser import Extension
from tests.harness.server import Server
from tests.transcripts import write_long_session

LINES = 12_000
SESSION_GETS = re.compile(r"GET /workspace/[^/]+/session$")


def first_items(server: Server, ws: str) -> list[dict[str, Any]]:
    """The session's items from its start, by paging back from its end with `before=` (the
    route the panel's scrolling uses, independent of `from=start`), big pages."""
    route = f"/workspace/{ws}/session?session={SAMPLE_SESSION}"
    page = server.get(f"{route}&limit=10000")
    items = list(page["items"])
    more = page["total"] > len(items) or page["skipped_bytes"] > 0
    while more:
        page = server.get(f"{route}&before={items[0]['id']}&limit=10000")
        items = page["items"] + items
        more = page["has_more"]
    return items


def session_gets(server: Server, since: int) -> list[str]:
    """The session route's requests (snapshots and pages) logged after the first `since`."""
    return [r for r in server.requests()[since:] if SESSION_GETS.fullmatch(r)]


def focused_id(panel: Page) -> str | None:
    found: str | None = panel.evaluate(
        "() => document.activeElement?.closest('article')?.dataset.itemId ?? null"
    )
    return found


def test_g_shows_the_first_item_of_a_12000_line_session_in_one_request(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    claude = tmp_path / "long"
    path = claude / "-path-to-Demo" / f"{SAMPLE_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    lines = REAL.read_bytes().count(b"\n")
    write_long_session(path, REAL, REAL.stat().st_size * LINES // lines)
    assert path.read_bytes().count(b"\n") >= LINES
    server: Server = server_factory(claude=claude)
    panel = panel_on(ext, server)
    items = first_items(server, sample_workspace(server))
    assert len(items) > 10_000
    earlier = panel.locator(".earlier")
    # The first page back (asked at once after the snapshot) is in: nothing else in flight.
    expect(earlier).to_contain_text("Load earlier", timeout=30_000)
    expect(panel.locator(f".feed [data-item-id='{items[0]['id']}']")).to_have_count(0)

    asked = len(server.requests())
    panel.locator(".feed > article").last.focus()
    panel.keyboard.press("g")
    first = panel.locator(f".feed > article[data-item-id='{items[0]['id']}']")
    expect(first).to_be_focused(timeout=30_000)
    expect(first).to_be_in_viewport()
    expect(earlier).to_have_text("Start of session")
    gets = session_gets(server, asked)
    assert len(gets) == 1, gets  # one request: the session's first page

    # Reading on down from the start: j moves item by item, in the session's order.
    for want in items[1:4]:
        panel.keyboard.press("j")
        expect(panel.locator(f".feed article[data-item-id='{want['id']}']")).to_be_focused()

    # Scrolled to the bottom of the window: the next page comes in below, one page, and the
    # reader stays where they are (not carried down page after page to the live end).
    asked = len(server.requests())
    scroller = panel.locator(".scroller")
    scroller.evaluate("s => { s.scrollTop = s.scrollHeight; }")
    panel.wait_for_function(
        "() => { const s = document.querySelector('.scroller');"
        " return s.scrollHeight - s.scrollTop - s.clientHeight > 3 * s.clientHeight; }"
    )
    expect(panel.locator(".later")).to_contain_text("Load later")
    assert len(session_gets(server, asked)) == 1, session_gets(server, asked)
    panel.locator(".feed > article").last.focus()

    # G: the latest items again, the last one focused; the reader is back at the live end.
    panel.keyboard.press("G")
    last = panel.locator(f".feed > article[data-item-id='{items[-1]['id']}']")
    expect(last).to_be_focused(timeout=30_000)
    expect(panel.locator(".later")).to_be_hidden()


def test_keys_work_from_a_clicked_thinking_row_and_are_listed_under_question_mark(
    ext: Extension, server_factory: Any, claude_dir: Path
) -> None:
    path = transcript(claude_dir)
    append_exchange(path, "Why is the build slow?", "It compiles twice.", thinking="Hmm, caching.")
    append_exchange(path, "Fix it", "Done: one compile.")
    server: Server = server_factory(claude=claude_dir)
    panel = panel_on(ext, server, ready=".feed .thinking-item")
    ws = sample_workspace(server)
    items = server.snapshot(ws, SAMPLE_SESSION)["items"]
    shown = [i for i in items if i["type"] != "tool_result"]  # results sit on their cards
    thinking = next(i for i in shown if i["type"] == "thinking")
    after = shown[shown.index(thinking) + 1]

    # A click on the Thinking row's summary puts focus on the summary, inside the item.
    summary = panel.locator(f".feed [data-item-id='{thinking['id']}'] summary").first
    summary.click()
    assert focused_id(panel) == thinking["id"]
    assert panel.evaluate("() => document.activeElement.tagName") == "SUMMARY"
    panel.keyboard.press("j")
    expect(panel.locator(f".feed article[data-item-id='{after['id']}']")).to_be_focused()
    panel.keyboard.press("k")
    expect(panel.locator(f".feed article[data-item-id='{thinking['id']}']")).to_be_focused()
    # Enter on the item opens its disclosure, and again closes it.
    details = panel.locator(f".feed [data-item-id='{thinking['id']}'] details").first
    was_open = details.evaluate("d => d.open")
    panel.keyboard.press("Enter")
    assert details.evaluate("d => d.open") is not was_open
    panel.keyboard.press("Enter")
    assert details.evaluate("d => d.open") is was_open
    # From the summary again: g to the first item, G to the last.
    summary.click()
    panel.keyboard.press("g")
    expect(panel.locator(f".feed > article[data-item-id='{shown[0]['id']}']")).to_be_focused()
    panel.keyboard.press("G")
    expect(panel.locator(f".feed > article[data-item-id='{shown[-1]['id']}']")).to_be_focused()

    # `?` lists the keys in a modal dialog; Escape closes it and focus goes back.
    panel.keyboard.press("?")
    dialog = panel.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for key, what in (("j", "Next item"), ("g", "Start of the session"), ("e", "error")):
        expect(dialog.get_by_role("row").filter(has_text=what)).to_contain_text(key)
    expect(dialog.get_by_role("button", name="Close")).to_be_focused()
    panel.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(panel.locator(f".feed > article[data-item-id='{shown[-1]['id']}']")).to_be_focused()
