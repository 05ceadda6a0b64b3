"""The side panel's timeline at 50,000 items, in real Chromium (issue 16).

bench/panel/page.html loads the panel's real modules (extension/sidepanel/timeline.js and what it
imports) from a loopback HTTP server over the repository, and builds a session of N items shaped
like the server's. Measured in the page with `performance.now()`:
- first paint: from the snapshot's data string arriving (JSON.parse included) to the end of the
  frame that paints it, for the snapshot the panel asks for (the latest 500 items of a session of
  N) and for all N items held at once (a session paged back to its start, then reloaded);
- append → painted, with all N items held: from `add()` of one live item to the end of the frame
  that paints it (this includes waiting for that frame), and the script work of it (`add()` plus
  the list's render). Each item arrives at a random point of a frame interval, as a live item
  (an SSE message) does: the server does not send in step with the panel's frames;
- scrolling up through the held session 120 px a frame for 240 frames (new rows come into the
  DOM every frame): the time between frames and how many were long (> 1.5 frame intervals).
No server and no extension are involved: this is the panel's own cost at that size.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' Chromium and panel size (tests/harness/chromium.py)
from tests.harness.chromium import CHROMIUM, PANEL_SIZE  # noqa: E402


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def _serve_repo() -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Quiet, directory=str(ROOT))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


PageRun = Callable[[Any, dict[str, Any]], Awaitable[None]]


async def in_chromium(page_path: str, run: PageRun) -> dict[str, Any]:
    """Open `page_path` (a bench page under the repository, served over loopback) in headless
    Chromium at the panel's size, wait for its `window.benchReady`, then `run(page, out)`:
    `out` holds the Chromium version, what `run` measured, and the page's first errors."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        return {"error": "playwright is not installed in this venv (pip install playwright)"}
    if not Path(CHROMIUM).exists():
        return {"error": f"no Chromium at {CHROMIUM} (set SIDEMIRROR_CHROMIUM)"}
    httpd = _serve_repo()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/{page_path}"
    out: dict[str, Any] = {}
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"]
            )
            try:
                out["chromium"] = browser.version
                page = await browser.new_page(viewport=PANEL_SIZE)
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                await page.goto(url)
                await page.wait_for_function("() => window.benchReady === true", timeout=30_000)
                await run(page, out)
                if errors:
                    out["errors"] = errors[:5]
            finally:
                await browser.close()
    finally:
        httpd.shutdown()
    return out


async def panel(args: argparse.Namespace) -> dict[str, Any]:
    async def run(page: Any, out: dict[str, Any]) -> None:
        # The panel's own path: the latest 500 items of the session, then history.
        out["first_paint_snapshot"] = await page.evaluate(
            "([n, runs, total]) => window.firstPaint(n, runs, total)",
            [500, 5, args.panel_items],
        )
        # The worst case: every item of the session held (scrolled back to its start).
        out["first_paint_all_held"] = await page.evaluate(
            "([n, runs]) => window.firstPaint(n, runs)", [args.panel_items, 3]
        )
        out["append"] = await page.evaluate("(n) => window.appends(n)", args.panel_appends)
        out["scroll"] = await page.evaluate("(n) => window.scrolling(n)", 240)

    return await in_chromium("bench/panel/page.html", run)


def rows(result: dict[str, Any] | None, blank: list[str]) -> list[str]:
    """The table's lines for this phase (no peer offers the same: its cells stay blank)."""
    return client.phase_rows("panel", result, blank, _cells)


def _cells(result: dict[str, Any]) -> list[tuple[str, str]]:
    snap, held = result["first_paint_snapshot"], result["first_paint_all_held"]
    app = result["append"]
    n = f"{held['session_items']:,}"
    cells = [
        (f"panel: first paint, latest 500 of {n} items (p50)", f"{snap['first_paint_p50_ms']} ms"),
        (f"panel: first paint, all {n} items held (p50)", f"{held['first_paint_p50_ms']} ms"),
        (
            f"panel: append → painted at {n} items p50 / p95",
            f"{app['append_to_painted_p50_ms']} / {app['append_to_painted_p95_ms']} ms",
        ),
        (
            f"panel: append work (script + layout) at {n} items p50 / p95",
            f"{app['append_work_p50_ms']} / {app['append_work_p95_ms']} ms",
        ),
    ]
    if scroll := result.get("scroll"):
        cells.append(
            (
                f"panel: scrolling {n} items, frame p50 / p95 (long frames of {scroll['frames']})",
                f"{scroll['frame_p50_ms']} / {scroll['frame_p95_ms']} ms ({scroll['long_frames']})",
            )
        )
    return cells


if __name__ == "__main__":
    import asyncio
    import json

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--panel-items", type=int, default=50_000)
    p.add_argument("--panel-appends", type=int, default=200)
    print(json.dumps(asyncio.run(panel(p.parse_args())), indent=2))
