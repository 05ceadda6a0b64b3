"""A CDP trace of the side panel's renderer during the fleet (`BENCH_PIXEL_TRACE=FILE`), and
what it says about the panel's part of write→pixel (bench/fleet_pixel.py).

The trace is Chromium's own (`Tracing.start`, categories of DevTools' Performance panel), written
to FILE as JSON; it can be opened in DevTools or Perfetto. `summary(FILE)` reads, on the
extension renderer's main thread:
- each live row's wait: from the end of the SSE handler that put it in the DOM (a
  `resumable-stream.js` call with a layout in it) to the start of the next main frame, and that
  frame's length;
- where each row found the renderer's compositor (its `cc` scheduler, on the Compositor thread)
  when the handler ended, and how long such rows waited (`rows_by_tick`, below);
- the main frames' time by phase (self time, ms a frame), the heaviest first;
- the fetches the panel's pages made, a second, by path.

`rows_by_tick`: the compositor ticks with the display (a `Scheduler::BeginFrame` each 16.7 ms)
while it may have something to draw, and for a tick or two after. A tick it needs starts an impl
frame (`Scheduler::BeginImplFrame`): a change asked for before that frame's deadline gets a main
frame at once. A tick it does not need when it comes is dropped (`Scheduler::BeginFrameDropped`):
in the traces, a change made in the rest of that interval waits for the next tick. With
no tick in the last interval, the compositor had stopped ticking: asking again brings a tick at
once. Rows are counted by the last tick before their handler ended: "impl", "dropped", "idle"
("other": a tick with neither mark after it, as when the trace lost one). Both panel pages
share the renderer's Compositor thread, so a tick may be the other page's; a run with one page
gave the same split.
Tracing slows the renderer: its figures are for comparing runs that were both traced.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import json
from pathlib import Path
from typing import Any

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "cc", "v8"]
HANDLER_URL = "resumable-stream.js"  # the SSE message handler of lib/page
FRAME = "ProxyMain::BeginMainFrame"
TICK = "Scheduler::BeginFrame"
IMPL = "Scheduler::BeginImplFrame"
DROPPED = "Scheduler::BeginFrameDropped"
TICK_US = 16_700  # a display interval at 60 Hz: no tick in the last one, the compositor was idle


async def start(cdp: Any) -> None:
    await cdp.send(
        "Tracing.start",
        {"transferMode": "ReturnAsStream", "traceConfig": {"includedCategories": CATEGORIES}},
    )


async def stop(cdp: Any, path: Path) -> None:
    """End the trace and write it to `path`."""
    done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    cdp.on("Tracing.tracingComplete", lambda e: done.done() or done.set_result(e))
    await cdp.send("Tracing.end")
    handle = (await done)["stream"]
    with path.open("w") as out:
        while True:
            chunk = await cdp.send("IO.read", {"handle": handle, "size": 1 << 20})
            out.write(chunk["data"])
            if chunk.get("eof"):
                break
    await cdp.send("IO.close", {"handle": handle})


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(p / 100 * len(values)))], 2)


def summary(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    calls = collections.Counter(e.get("pid") for e in events if e.get("name") == "FunctionCall")
    if not calls:
        return {"error": "no script ran in the trace"}
    pid = calls.most_common(1)[0][0]  # the extension renderer: both panel pages live in it
    main = sorted(
        (e for e in events if e.get("pid") == pid and e.get("tid") == pid and e.get("ph") == "X"),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    span_s = (main[-1]["ts"] - main[0]["ts"]) / 1e6 if main else 0.0
    frames = [e for e in main if e["name"] == FRAME]
    frame_starts = [f["ts"] for f in frames]
    layouts = [e["ts"] for e in main if e["name"] == "Layout"]
    waits, lengths, ends = [], [], []
    for e in main:
        url = e.get("args", {}).get("data", {}).get("url", "")
        if e["name"] != "FunctionCall" or not url.endswith(HANDLER_URL):
            continue
        end = e["ts"] + e["dur"]
        k = bisect.bisect_left(layouts, e["ts"])
        if k == len(layouts) or layouts[k] >= end:
            continue  # no layout: not a row put in the DOM
        j = bisect.bisect_left(frame_starts, end)
        if j < len(frames):
            waits.append((frames[j]["ts"] - end) / 1e3)
            lengths.append(frames[j]["dur"] / 1e3)
            ends.append(end)
    return {
        "seconds": round(span_s, 1),
        "rows": len(waits),
        "wait_for_frame_ms": {"p50": _pct(waits, 50), "p95": _pct(waits, 95)},
        "frame_ms": {"p50": _pct(lengths, 50), "p95": _pct(lengths, 95)},
        "frames_per_s": round(len(frames) / span_s, 1) if span_s else None,
        "rows_by_tick": _rows_by_tick(events, pid, ends, waits),
        "frame_phases_ms": _phases(main, frames),
        "fetches_per_s": _fetches(events, span_s),
    }


def _rows_by_tick(
    events: list[dict[str, Any]], pid: int, ends: list[float], waits: list[float]
) -> dict[str, dict[str, float | int | None]]:
    """Rows by the compositor's last tick before their handler ended (the module's docstring):
    how many, the share of all rows, the share of them whose frame waited 1 ms or more, and
    their wait p50 / p95."""
    marks = sorted(
        (e["ts"], e["name"])
        for e in events
        if e.get("pid") == pid and e.get("name") in (TICK, IMPL, DROPPED)
    )
    times = [ts for ts, _ in marks]
    by: dict[str, list[float]] = collections.defaultdict(list)
    for end, wait in zip(ends, waits, strict=True):
        i = bisect.bisect_left(times, end) - 1
        while i >= 0 and marks[i][1] != TICK:
            i -= 1
        if i < 0 or end - times[i] > TICK_US:
            state = "idle"
        else:  # what the scheduler did with that tick: the mark after it, at the same moment
            after = [name for ts, name in marks[i + 1 : i + 3] if ts - times[i] < 1_000]
            state = "dropped" if DROPPED in after else "impl" if IMPL in after else "other"
        by[state].append(wait)
    n = max(1, len(ends))
    return {
        state: {
            "rows": len(w),
            "share_percent": round(100 * len(w) / n, 1),
            "waited_percent": round(100 * sum(x >= 1 for x in w) / len(w), 1),
            "wait_p50_ms": _pct(w, 50),
            "wait_p95_ms": _pct(w, 95),
        }
        for state, w in sorted(by.items())
    }


def _phases(main: list[dict[str, Any]], frames: list[dict[str, Any]]) -> dict[str, float]:
    """Self time by event name inside the main frames, ms a frame, the heaviest eight."""
    starts = [e["ts"] for e in main]
    own: collections.Counter[str] = collections.Counter()
    for frame in frames:
        end = frame["ts"] + frame["dur"]
        stack: list[dict[str, Any]] = []
        for e in main[bisect.bisect_left(starts, frame["ts"]) : bisect.bisect_left(starts, end)]:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            if stack:
                own[stack[-1]["name"]] -= e["dur"]
            own[e["name"]] += e["dur"]
            stack.append(e)
    n = max(1, len(frames))
    return {name: round(us / n / 1e3, 3) for name, us in own.most_common(8)}


def _fetches(events: list[dict[str, Any]], span_s: float) -> dict[str, float]:
    paths: collections.Counter[str] = collections.Counter()
    for e in events:
        if e.get("name") == "ResourceSendRequest":
            url = e.get("args", {}).get("data", {}).get("url", "")
            if url.startswith("http"):
                paths["/" + url.split("?")[0].split("/", 3)[-1]] += 1
    return {p: round(n / span_s, 2) for p, n in paths.most_common(8)} if span_s else {}
