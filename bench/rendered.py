"""append → rendered in the side panel, in real Chromium (issue 9, measurement 2).

Our server runs on a port of the extension's range (47470–47479) against a temporary HOME holding
a real transcript (bench/synth.py). Debian Chromium loads the unpacked extension the way the e2e
suite does (tests/e2e/support.py `launch`), opens the side panel page, pins the server port (the
popup's `setPort` message) and waits until the timeline shows the session, live.

A MutationObserver on the panel's scroller records, for each marker `BMK<n>Z` found in the text
of an added node, `performance.timeOrigin + performance.now()` (epoch ms) the first time it shows
up. A writer thread appends real transcript lines carrying those markers at a fixed rate and
records `time.time()` just before each `write()`. Both are wall-clock epoch times from the same
machine clock: Chromium's `timeOrigin` is the system time at the page's start and `now()` is
monotonic from there, Python's `time.time()` is `CLOCK_REALTIME`. The offset between the two is
measured (round trips, smallest one kept) before and after the appends and reported, so a clock
step or skew would show.

Every wait is bounded in count and in time. Secondary figures of the same run: append → SSE event
(one aiohttp client on the same session stream, monotonic clock, as in the latency section) and
append → the next animation frame after insertion (`requestAnimationFrame`).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import extension_browser
import peers
import synth

# The Chromium command line, the extension's id and the port picker are the test harness's: one
# way to launch the browser under test, whether a test or a benchmark drives it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.harness.chromium import CHROMIUM, EXT_ID, PANEL_SIZE, SET_PORT_JS  # noqa: E402
from tests.harness.ports import range_port  # noqa: E402

MAX_ITEMS = 1500  # extension/sidepanel/timeline.js: Timeline maxItems (top-level entries)

STATE_JS = """
() => {
  const feed = document.querySelector('.session-tab .feed');
  const earlier = document.querySelector('.session-tab .earlier');
  return {
    seen: Object.keys(window.__bench.rendered).length,
    top_level: feed ? feed.childElementCount : 0,
    items_in_dom: feed ? feed.querySelectorAll('[data-item-id]').length : 0,
    earlier_not_shown: earlier && !earlier.hidden ? earlier.textContent : null,
    stream: document.querySelector('.session-tab')?.dataset.stream || null,
    visibility: document.visibilityState,
  };
}
"""


async def rendered(root: Path, args: argparse.Namespace, session_id: str) -> dict:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        return {"error": "playwright is not installed in this venv (pip install playwright)"}
    if not Path(CHROMIUM).exists():
        return {"error": f"no Chromium at {CHROMIUM} (set SIDEMIRROR_CHROMIUM)"}

    home = root / "rendered" / "home"
    (home / ".claude/projects").mkdir(parents=True)
    path = home / ".claude/projects" / synth.CWD.replace("/", "-") / f"{session_id}.jsonl"
    synth.seed_session(path, session_id)
    factory = synth.LineFactory(session_id)
    port = range_port()
    proc, log_path = peers._spawn(
        "sidemirror", peers.ours_argv(home, port), home, {"SIDEMIRROR_TOKEN": peers.TOKEN}
    )
    base = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {"port": port, "appends": args.appends, "rate_per_s": args.rate}
    try:
        await peers.wait_http(base + "/health", proc, 60)
        run = peers.Running("sidemirror", proc, port, home, log_path)
        async with async_playwright() as pw:
            profile = root / "rendered" / "profile"
            ctx = await extension_browser.launch(pw, profile, home.parent / "sm-runtime")
            try:
                out["chromium"] = ctx.browser.version if ctx.browser else None
                await extension_browser.wait_worker(ctx)
                page = await ctx.new_page()
                await page.set_viewport_size(PANEL_SIZE)
                await page.goto(f"chrome-extension://{EXT_ID}/sidepanel/sidepanel.html")
                await page.bring_to_front()
                status = await page.evaluate(SET_PORT_JS, port)
                if not status or status.get("state") != "connected":
                    return {**out, "error": f"extension did not connect: {status}"}
                # the timeline shows the session, live
                live = page.locator(".session-tab[data-stream=live] .feed [data-item-id]")
                await live.first.wait_for(state="attached", timeout=30_000)
                sel = await page.locator("#session-select option").all_inner_texts()
                out["session_shown"] = sel[1] if len(sel) > 1 else None
                out["observer"] = await page.evaluate(extension_browser.OBSERVER_JS)
                # a second client on the same stream: append → SSE event in the same run
                url = await peers.ours_stream_url(run, session_id)
                watcher = client.SseWatcher(url, peers.AUTH, b"event: snapshot")
                stop = asyncio.Event()
                async with aiohttp.ClientSession() as session:
                    task = await client.start_watcher(session, watcher, stop, 30)
                    await asyncio.sleep(1.0)  # settle, as the latency section does
                    out["clock_before"] = await extension_browser.clock_offset(page)
                    app = client.Appender(path, factory.line, args.appends, 1 / args.rate)
                    t0 = time.monotonic()
                    app.start()
                    budget = args.appends / args.rate + 60
                    while app.is_alive() and time.monotonic() - t0 < budget:
                        await asyncio.sleep(0.1)
                    app.stop_flag.set()
                    deadline = time.monotonic() + args.grace
                    wanted = len(app.wall)
                    state: dict[str, Any] = {}
                    while time.monotonic() < deadline:
                        state = await page.evaluate(STATE_JS)
                        if state["seen"] >= wanted and len(watcher.seen.first) >= wanted:
                            break
                        await asyncio.sleep(0.1)
                    await asyncio.sleep(0.1)  # the last frame callbacks
                    got = await page.evaluate(
                        "() => ({rendered: window.__bench.rendered, frame: window.__bench.frame})"
                    )
                    out["clock_after"] = await extension_browser.clock_offset(page)
                    stop.set()
                    task.cancel()
                out["panel"] = await page.evaluate(STATE_JS)
                # the timeline keeps at most 1,500 top-level entries (timeline.js `maxItems`)
                out["panel"]["under_cap"] = out["panel"]["top_level"] < MAX_ITEMS
            finally:
                await ctx.close()
        rend = {int(k): v for k, v in got["rendered"].items()}
        frame = {int(k): v for k, v in got["frame"].items()}
        lat = [(rend[n] / 1000 - t) for n, t in app.wall.items() if n in rend]
        out["append_to_rendered"] = client.summary_ms(lat, wanted)
        lat_f = [(frame[n] / 1000 - t) for n, t in app.wall.items() if n in frame]
        out["append_to_next_frame"] = client.summary_ms(lat_f, wanted)
        lat_e = [watcher.seen.first[n] - t for n, t in app.sent.items() if n in watcher.seen.first]
        out["append_to_sse_event"] = client.summary_ms(lat_e, wanted)
        if watcher.error:
            out["sse_error"] = watcher.error
        out["span_s"] = round(max(app.wall.values()) - min(app.wall.values()), 1) if app.wall else 0
    except Exception as exc:  # report why, carry on with the other sections
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["log"] = peers.tail_log(log_path)
    finally:
        peers.stop(proc)
        shutil.rmtree(root / "rendered" / "profile", ignore_errors=True)
    return out
