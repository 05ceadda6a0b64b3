"""The panel's timeline holding 50,000 items (issue 16), in real Chromium: the panel's own modules
(the page bench/panel uses) served over loopback. A live item appended at the end leaves every
row already in the DOM exactly where it was (a moved row is repainted, and all of them moving is a
full repaint per live item): the room standing in for the 50,000 rows above is millions of
pixels, and a single CSS length that size is a fraction of a pixel off."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Playwright

from tests.harness.chromium import CHROMIUM
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
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless=new"])
    try:
        page = browser.new_page(viewport={"width": 420, "height": 820})
        page.goto(f"{repo_url}/bench/panel/page.html")
        page.wait_for_function("() => window.benchReady === true")
        page.evaluate("([n, runs]) => window.firstPaint(n, runs)", [50_000, 1])
        # The rest of the rows near the viewport are built when idle: wait for them.
        page.wait_for_function("() => window.__timeline.vlist.mounted.length > 20")
        result = page.evaluate(APPEND_AND_MEASURE, 12)
    finally:
        browser.close()
    # The window really moved (rows above were replaced by room), far down a 50,000-row list…
    assert result["shifted"] >= 6, result
    assert result["rows"] > 30_000 and result["rowsAbove"] > result["rows"] - 100, result
    assert result["atBottom"], result
    # …and no row that stayed in the DOM moved at all.
    assert result["moves"] and max(result["moves"]) == 0, max(result["moves"])
