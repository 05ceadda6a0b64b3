"""Debian Chromium with the real extension, for the benchmarks that drive it (rendered,
markdown, the fleet's write→pixel), with Playwright's async API.

The command line, the extension's id and the parking of a fresh profile are the test harness's
(tests/harness/chromium.py): one way to start the browser under test, whether a test or a
benchmark drives it. A bench browser is parked like a test's: it probes no port of the
extension's range (where a user's own server may be) before the bench pins it to its server.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import peers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.harness.chromium import (  # noqa: E402
    CHROMIUM,
    EXT_ID,
    PANEL_SIZE,
    PARK_JS,
    SET_PORT_JS,
    launch_options,
)
from tests.harness.ports import parked_port  # noqa: E402

__all__ = [
    "CHROMIUM",
    "EXT_ID",
    "OBSERVER_JS",
    "PANEL_SIZE",
    "SET_PORT_JS",
    "clock_offset",
    "launch",
]

# Installed in a panel page once its timeline is live: the first sighting of each marker
# `BMK<n>Z` in the text of a node added anywhere under the Session tab's scroller, as epoch ms
# on the page's clock (`performance.timeOrigin + performance.now()`):
# - `rendered[n]`: when the node was inserted (the observer runs at the end of that task);
# - `frame[n]`: the next animation frame asked for after that;
# - `painted[n]`: the end of the frame that paints it, as bench/panel/page.js defines it: the
#   first task after that frame's rendering steps (rAF callbacks, style, layout, paint all run
#   in one task on the main thread, so a task posted during them runs once they are done). A
#   row inserted during a frame's callbacks (sidepanel/frame-task.js) is painted by that frame;
#   one inserted by a task (a live row, when the timeline follows its end: virtual-list.js
#   `append`) by the next one, and is counted in `outside_frame`. `requestAnimationFrame` is
#   wrapped to tell which: inside, a frame's callbacks have begun and its paint is not over.
OBSERVER_JS = r"""
() => {
  const scroller = document.querySelector('.session-tab .scroller');
  const now = () => performance.timeOrigin + performance.now();
  const afterTask = (fn) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = fn;
    ch.port2.postMessage(0);
  };
  let inFrame = false;
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (cb) => raf((ts) => {
    if (!inFrame) {
      inFrame = true;
      afterTask(() => { inFrame = false; });
    }
    cb(ts);
  });
  const rendered = {}, frame = {}, painted = {};
  const bench = { rendered, frame, painted, outside_frame: 0 };
  const mark = /BMK(\d{7})Z/g;
  const obs = new MutationObserver((records) => {
    const t = now();
    const fresh = [];
    for (const r of records) {
      for (const node of r.addedNodes) {
        const text = node.textContent;
        if (!text || text.indexOf('BMK') < 0) continue;
        for (const m of text.matchAll(mark)) {
          const n = Number(m[1]);
          if (!(n in rendered)) {
            rendered[n] = t;
            fresh.push(n);
          }
        }
      }
    }
    if (!fresh.length) return;
    const stamp = (into) => () => {
      const at = now();
      for (const n of fresh) into[n] = at;
    };
    raf(stamp(frame));
    if (inFrame) afterTask(stamp(painted));
    else {
      bench.outside_frame += fresh.length;
      raf(() => afterTask(stamp(painted)));
    }
  });
  obs.observe(scroller, { childList: true, subtree: true });
  bench.observer = obs;
  window.__bench = bench;
  const items = scroller.querySelectorAll('[data-item-id]').length;
  return { visibility: document.visibilityState, items };
}
"""


async def launch(pw: Any, profile: Path, runtime_dir: Path | None = None) -> Any:
    """The tests' Chromium with the extension (a persistent context at `profile`). With
    `runtime_dir`, the pairing host is installed for the browser first, from the bench's own
    installation (the extension pairs through it: docs/security.md)."""
    if runtime_dir is not None:
        subprocess.run(
            [str(peers.BENCH / "venv/bin/python"), "-m", "sidemirror", "extension", "install-host",
             "--dir", str(profile / "NativeMessagingHosts"), "--runtime-dir", str(runtime_dir),
             "--launcher-dir", str(profile.parent / "pairing-host")],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    return await pw.chromium.launch_persistent_context(str(profile), **launch_options())


async def wait_worker(ctx: Any) -> Any:
    """The extension's service worker, once its install handler has run, parked."""
    prefix = f"chrome-extension://{EXT_ID}/"
    for w in ctx.service_workers:
        if w.url.startswith(prefix):
            break
    else:
        w = await ctx.wait_for_event("serviceworker", timeout=15_000)
    await w.evaluate(PARK_JS, parked_port())
    return w


async def clock_offset(page: Any, rounds: int = 30) -> dict[str, float]:
    """The page's clock (`performance.timeOrigin + performance.now()`, epoch ms) − Python's
    `time.time()`, in ms, from the round trip with the smallest delay."""
    best: tuple[float, float] | None = None
    for _ in range(rounds):
        t0 = time.time()
        page_ms = await page.evaluate("() => performance.timeOrigin + performance.now()")
        t1 = time.time()
        rtt = (t1 - t0) * 1000
        offset = page_ms - (t0 + t1) / 2 * 1000
        if best is None or rtt < best[0]:
            best = (rtt, offset)
    assert best is not None
    return {"offset_ms": round(best[1], 3), "rtt_ms": round(best[0], 3)}
