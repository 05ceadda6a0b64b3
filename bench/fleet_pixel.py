"""write → pixel in the fleet (issue 34): one real side panel follows a session of the fleet.

Debian Chromium with the real extension (bench/extension_browser.py: the tests' command line,
parked like a test's browser, then pinned to the fleet's server with the popup's `setPort`).
Two side panel pages, at the panel's size:
- the Session tab, on one followed Claude session, chosen as a user does: the header's session
  button, the "All sessions" list filtered by the session's id, its row clicked (so it is pinned:
  "Auto" would stay on whichever workspace it showed first, all twenty keep changing);
- the Sessions view (every live session, from the attention stream), in a second tab.

In the first page the observer of bench/extension_browser.py records, for each marker of the
session's lines, the end of the frame that paints it, as epoch ms on the page's clock
(`performance.timeOrigin + performance.now()`). The fleet's writer records `time.time()` just
before each `write()`. painted − written is the figure, on one clock: both read the machine's
system clock (`CLOCK_REALTIME`; Chromium's `timeOrigin` is the system time when the page
started, `now()` counts monotonically from it). The bench checks that: the page clock −
`time.time()` from the quickest of 30 round trips, before and after the load.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import client
import extension_browser
import peers
import renderer_trace
from extension_browser import CHROMIUM, EXT_ID, PANEL_SIZE, SET_PORT_JS

PANEL_URL = f"chrome-extension://{EXT_ID}/sidepanel/sidepanel.html"
# A CDP trace of the panel's renderer over the load, to this file (bench/renderer_trace.py).
TRACE = "BENCH_PIXEL_TRACE"

# The page's frame interval: the median gap between 30 animation frames (60 Hz: 16.7 ms).
FRAME_INTERVAL_JS = """async () => {
  const ts = [];
  for (let i = 0; i < 31; i++) ts.push(await new Promise((r) => requestAnimationFrame(r)));
  const gaps = ts.slice(1).map((t, i) => t - ts[i]).sort((a, b) => a - b);
  return Math.round(gaps[15] * 100) / 100;
}"""

STATE_JS = """() => ({
  painted: Object.keys(window.__bench.painted).length,
  outside_frame: window.__bench.outside_frame,
  visibility: document.visibilityState,
})"""


class Panel:
    """The Session tab's page (measured) and the Sessions view's page of one browser."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.info: dict[str, Any] = {"chromium": ctx.browser.version if ctx.browser else None}
        self.page: Any = None
        self.sessions_view: Any = None

    async def _open(self, port: int) -> Any:
        page = await self.ctx.new_page()
        await page.set_viewport_size(PANEL_SIZE)
        await page.goto(PANEL_URL)
        status = await page.evaluate(SET_PORT_JS, port)
        if not status or status.get("state") != "connected":
            raise RuntimeError(f"the extension did not connect: {status}")
        return page

    async def show(self, port: int, session_id: str) -> None:
        """Both pages open, the session shown live, its observer installed."""
        self.sessions_view = await self._open(port)
        await self.sessions_view.locator("#tab-sessions").click()
        await self.sessions_view.locator(".session-row").first.wait_for(timeout=30_000)
        self.page = page = await self._open(port)
        await page.bring_to_front()
        await page.locator("#session-list-button").click()
        dialog = page.get_by_role("dialog", name="All sessions")
        await dialog.get_by_role("combobox", name="Filter sessions").fill(session_id[:8])
        await dialog.locator(f'.sl-session[data-session="{session_id}"]').first.click()
        await page.wait_for_function(
            """(sid) => document.querySelector('#session-list-button')?.title.includes(sid)
                && document.querySelector('.session-tab[data-stream=live] .feed [data-item-id]')""",
            arg=session_id,
            timeout=30_000,
        )
        self.info["observer"] = await page.evaluate(extension_browser.OBSERVER_JS)
        self.info["frame_interval_ms_before"] = await page.evaluate(FRAME_INTERVAL_JS)
        self.info["clock_before"] = await extension_browser.clock_offset(page)
        self._cdp = {
            "session_tab": await self.ctx.new_cdp_session(page),
            "sessions_view": await self.ctx.new_cdp_session(self.sessions_view),
        }
        for cdp in self._cdp.values():
            await cdp.send("Performance.enable")
        self._busy0 = {k: await _busy(c) for k, c in self._cdp.items()}
        self._t0 = time.monotonic()
        self._trace = Path(os.environ[TRACE]) if os.environ.get(TRACE) else None
        if self._trace is not None:
            await renderer_trace.start(self._cdp["session_tab"])

    async def painted(
        self, wall: dict[int, float], grace: float, sse: dict[int, float]
    ) -> dict[str, Any]:
        """write → pixel of the markers written (`wall`: n → `time.time()` before the write),
        waiting up to `grace` s for the last ones to be painted; and the panel's part of it,
        past the moment an SSE client on the same session got the line (`sse`: n → write →
        event, s, from that client's monotonic clock)."""
        if self._trace is not None:  # the load is over: what follows is not traced
            await renderer_trace.stop(self._cdp["session_tab"], self._trace)
            self.info["trace"] = renderer_trace.summary(self._trace)
        deadline = time.monotonic() + grace
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            state = await self.page.evaluate(STATE_JS)
            if state["painted"] >= len(wall):
                break
            await self.page.wait_for_timeout(100)
        # Main-thread time of each page over the run, % of wall time (both pages live in the
        # extension's one renderer process, so they share its main thread).
        spent = time.monotonic() - self._t0
        self.info["main_thread_percent"] = {
            k: {
                m: round(100 * (v - self._busy0[k][m]) / spent, 1)
                for m, v in (await _busy(c)).items()
            }
            for k, c in self._cdp.items()
        }
        stamps = await self.page.evaluate(
            "() => ({rendered: window.__bench.rendered, painted: window.__bench.painted})"
        )
        painted = stamps["painted"]
        rendered = {int(n): ms / 1000 for n, ms in stamps["rendered"].items()}
        self.info["clock_after"] = await extension_browser.clock_offset(self.page)
        self.info["frame_interval_ms_after"] = await self.page.evaluate(FRAME_INTERVAL_JS)
        self.info["sessions_view"] = await self.sessions_view.evaluate(
            """() => ({rows: document.querySelectorAll('.session-row').length,
                       visibility: document.visibilityState})"""
        )
        at = {int(n): ms / 1000 for n, ms in painted.items()}
        lat = [at[n] - t for n, t in wall.items() if n in at]
        after_sse = [at[n] - t - sse[n] for n, t in wall.items() if n in at and n in sse]
        # Where it went: the write to the row in the DOM (server, SSE, the panel's script), and
        # the row in the DOM to its frame's end (waiting for the frame, then rendering it).
        to_dom = [rendered[n] - t for n, t in wall.items() if n in rendered]
        to_frame = [at[n] - rendered[n] for n in wall if n in at and n in rendered]
        if raw := os.environ.get("BENCH_PIXEL_RAW"):  # for a closer look at one run
            Path(raw).write_text(json.dumps({"wall": wall, "sse": sse, "stamps": stamps}))
        offsets = [self.info[k]["offset_ms"] for k in ("clock_before", "clock_after")]
        return {
            **client.summary_ms(lat, len(wall)),
            "p95_ms": _p_ms(lat, 95),
            "after_sse": {
                **client.summary_ms(after_sse, len(wall)),
                "p95_ms": _p_ms(after_sse, 95),
            },
            "to_dom": {"p50_ms": _p_ms(to_dom, 50), "p95_ms": _p_ms(to_dom, 95)},
            "dom_to_frame_end": {"p50_ms": _p_ms(to_frame, 50), "p95_ms": _p_ms(to_frame, 95)},
            "outside_frame": state.get("outside_frame"),
            "visibility": state.get("visibility"),
            "clock_offset_ms": max(offsets, key=abs),
            **self.info,
        }


async def _busy(cdp: Any) -> dict[str, float]:
    """Seconds of main-thread time so far: the renderer's in all (`task`: both pages share its
    main thread), and the page's own in script and in style and layout."""
    got = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
    return {
        "task": got["TaskDuration"],
        "script": got["ScriptDuration"],
        "style_layout": got["RecalcStyleDuration"] + got["LayoutDuration"],
    }


def _p_ms(latencies_s: list[float], p: float) -> float | None:
    v = client.percentile([x * 1000 for x in latencies_s], p)
    return None if v is None else round(v, 2)


@contextlib.asynccontextmanager
async def panel(root: Path, run: peers.Running, session_id: str) -> AsyncIterator[Panel]:
    """Chromium with the extension, pinned to `run`'s server, showing `session_id` (`Panel`);
    closed, and its profile removed, when the block ends."""
    from playwright.async_api import async_playwright  # the bench's venv has it (scripts/bench)

    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"no Chromium at {CHROMIUM} (set SIDEMIRROR_CHROMIUM)")
    profile = root / "profile"
    async with async_playwright() as pw:
        ctx = await extension_browser.launch(pw, profile, run.home.parent / "sm-runtime")
        try:
            await extension_browser.wait_worker(ctx)
            shown = Panel(ctx)
            await shown.show(run.port, session_id)
            yield shown
        finally:
            await ctx.close()
            shutil.rmtree(profile, ignore_errors=True)


def rows(name: str, r: dict[str, Any]) -> list[tuple[str, str]]:
    """The results table's lines for write → pixel (none when it was not measured)."""
    px = r.get("pixel")
    if not px:
        return []
    label = f"fleet, {name}: write→pixel p50 / p95 ({px.get('session', '?')})"
    if "error" in px:
        return [(label, "error: " + px["error"][:60])]
    offset = px["clock_offset_ms"]
    value = f"{px['p50_ms']} / {px['p95_ms']} ms (n {px['n']}, missed {px['missed']}; "
    value += f"frames {px['frame_interval_ms_before']} ms, clocks {offset:+} ms)"
    own = px["after_sse"]
    label_own = f"fleet, {name}: write→pixel past the SSE event, p50 / p95 ({px['session']})"
    out = [(label, value), (label_own, f"{own['p50_ms']} / {own['p95_ms']} ms")]
    if "to_dom" in px:
        dom, frame = px["to_dom"], px["dom_to_frame_end"]
        label_split = f"fleet, {name}: write→DOM, DOM→frame end p50 / p95 ({px['session']})"
        split = f"{dom['p50_ms']} / {dom['p95_ms']} ms, {frame['p50_ms']} / {frame['p95_ms']} ms"
        out.append((label_split, split))
    return out
