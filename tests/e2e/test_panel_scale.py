"""The panel's timeline holding 50,000 items (issue 16), in real Chromium: the panel's own modules
(the page bench/panel uses) served over loopback. A live item appended at the end leaves every
row already in the DOM exactly where it was (a moved row is repainted, and all of them moving is a
full repaint per live item): the room standing in for the 50,000 rows above is millions of
pixels, and a single CSS length that size is a fraction of a pixel off."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from tests.harness.browser import plain_chromium
from tests.harness.paths import ROOT


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def repo_url() -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(ROOT))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@contextlib.contextmanager
def timeline_page(pw: Playwright, repo_url: str, items: int) -> Iterator[Page]:
    """The panel's timeline (the bench page) holding `items` items, scrolled to its end."""
    browser = plain_chromium(pw)
    try:
        page = browser.new_page(viewport={"width": 420, "height": 820})
        page.goto(f"{repo_url}/bench/panel/page.html")
        page.wait_for_function("() => window.benchReady === true")
        page.evaluate("([n, runs]) => window.firstPaint(n, runs)", [items, 1])
        # The rest of the rows near the viewport are built when idle: wait for them.
        page.wait_for_function("() => window.__timeline.vlist.mounted.length > 20")
        yield page
    finally:
        browser.close()


# Appends live items one by one (the list follows the bottom, so the rows in the DOM shift down
# by one each time) and reports, for the rows in the DOM before and after each, how far any moved.
APPEND_AND_MEASURE = """async (count) => {
  const t = window.__timeline;
  const s = t.scroller;
  const { makeItems } = await import("/bench/panel/page.js");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const where = () => new Map(t.vlist.mounted.map((r) => [r, r.el.getBoundingClientRect().top - s.getBoundingClientRect().top + s.scrollTop]));
  let seq = t.lastSeq + 1;
  const moves = [];
  let shifted = 0;
  for (let i = 0; i < count; i++) {
    await frame();
    const before = where();
    const from = t.vlist.mountedFrom;
    t.add(makeItems(1, seq++)[0]);
    await frame();
    if (t.vlist.mountedFrom !== from) shifted += 1;
    for (const [row, y] of where()) if (before.has(row)) moves.push(Math.abs(y - before.get(row)));
  }
  return { moves, shifted, rows: t.vlist.rows.length, rowsAbove: t.vlist.mountedFrom, atBottom: t.atBottom() };
}"""


def test_rows_on_screen_stay_put_as_live_items_arrive(pw: Playwright, repo_url: str) -> None:
    with timeline_page(pw, repo_url, 50_000) as page:
        result = page.evaluate(APPEND_AND_MEASURE, 12)
    # The window really moved (rows above were replaced by room), far down a 50,000-row list…
    assert result["shifted"] >= 6, result
    assert result["rows"] > 30_000 and result["rowsAbove"] > result["rows"] - 100, result
    assert result["atBottom"], result
    # …and no row that stayed in the DOM moved at all.
    assert result["moves"] and max(result["moves"]) == 0, max(result["moves"])


# A reader scrolls up a little from the end: the next frames leave them there (the list used to
# pull anyone within its 48 px "follow" slack back down, between a click's mousedown and mouseup).
# A live item arriving then still follows them to the end; one scrolled further up stays put.
NUDGE_THEN_APPEND = """async ({ up, far }) => {
  const t = window.__timeline;
  const s = t.scroller;
  const { makeItems } = await import("/bench/panel/page.js");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const below = () => s.scrollHeight - s.scrollTop - s.clientHeight;
  const scrollBy = async (dy) => {
    const seen = new Promise((resolve) => s.addEventListener("scroll", resolve, { once: true }));
    s.scrollTop += dy;
    await seen;
    for (let i = 0; i < 3; i++) await frame(); // the scroll's render, and one more
  };
  let seq = t.lastSeq + 1;
  const append = async () => {
    t.add(makeItems(1, seq++)[0]);
    for (let i = 0; i < 3; i++) await frame();
  };
  await scrollBy(-up);
  const nudged = below();
  await append();
  const followed = below();
  await scrollBy(-far);
  await append();
  return { nudged, followed, farAfter: below() };
}"""


def test_a_small_scroll_up_is_kept_and_new_items_still_follow(
    pw: Playwright, repo_url: str
) -> None:
    with timeline_page(pw, repo_url, 500) as page:
        result = page.evaluate(NUDGE_THEN_APPEND, {"up": 12, "far": 400})
    assert 11 <= result["nudged"] <= 13, result  # still where the reader put it
    assert result["followed"] <= 2, result  # a live item: back at the end, following
    assert result["farAfter"] > 300, result  # further up: a live item does not pull them down


# Another tab shown (the Sessions view), live items keep arriving into the hidden timeline. It
# builds no row for them (a row built hidden is measured at no width, and rebuilt anyway), and
# when it shows again the reader is where they were: at the end, following, or on the row they
# had scrolled up to (a hidden list's scrollTop reads 0, which used to pin it to the end).
HIDDEN_THEN_SHOWN = """async ({ n, up }) => {
  const t = window.__timeline;
  const s = t.scroller;
  const { makeItems } = await import("/bench/panel/page.js");
  const frames = async (k) => {
    for (let i = 0; i < k; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
  };
  const below = () => s.scrollHeight - s.scrollTop - s.clientHeight;
  const top = (row) => row.el.getBoundingClientRect().top - s.getBoundingClientRect().top;
  let seq = t.lastSeq + 1;
  const whileHidden = async () => {
    s.parentElement.style.display = "none";
    await frames(2);
    const before = t.vlist.rows.length;
    for (const item of makeItems(n, seq)) t.add(item);
    seq += n;
    await frames(2);
    const fresh = t.vlist.rows.slice(before);
    if (!fresh.length) throw new Error("no new rows");
    const built = fresh.filter((row) => row.el).length;
    s.parentElement.style.display = "";
    await frames(3);
    return built;
  };
  const builtAtEnd = await whileHidden();
  const last = t.vlist.rows[t.vlist.rows.length - 1];
  const atEnd = {
    built: builtAtEnd,
    below: below(),
    lastShown: !!last.el && last.el.isConnected && top(last) + last.el.offsetHeight <= s.clientHeight,
    lastMeasured: !!last.el && Math.abs(last.h - last.el.getBoundingClientRect().height) < 0.5,
  };
  const scrolled = new Promise((resolve) => s.addEventListener("scroll", resolve, { once: true }));
  s.scrollTop -= up;
  await scrolled;
  await frames(3);
  const row = t.vlist.firstOnScreen();
  const before = top(row);
  const builtUp = await whileHidden();
  return { atEnd, up: { built: builtUp, same: t.vlist.firstOnScreen() === row, moved: top(row) - before, below: below() } };
}"""


def test_a_hidden_timeline_builds_nothing_and_keeps_the_readers_place(
    pw: Playwright, repo_url: str
) -> None:
    with timeline_page(pw, repo_url, 500) as page:
        result = page.evaluate(HIDDEN_THEN_SHOWN, {"n": 30, "up": 600})
    at_end, up = result["atEnd"], result["up"]
    assert at_end["built"] == 0 and up["built"] == 0, result
    # Following the end: shown again at the end, the newest item on screen at its real height.
    assert at_end["below"] <= 2 and at_end["lastShown"] and at_end["lastMeasured"], result
    # Scrolled up: the same row, at the same place, the new items below it.
    assert up["same"] and abs(up["moved"]) <= 1 and up["below"] > 500, result
