"""Where a lone append's time goes: stage timestamps from inside our server, per append.

    .bench/venv/bin/python bench/trace_latency.py [--appends 60] [--rate 5]

Starts our server (as `bench/run.py` does) in a child that first wraps a few functions to record
`time.monotonic()` (CLOCK_MONOTONIC: one clock for every process on the machine) at each stage:
inotify fd readable → watcher task resumed → tail read → parsed → journal append → published →
stream task woke → SSE bytes written. The client (the bench's own `Appender` + `SseWatcher`)
records the write and the arrival of each marker. Appends are spaced (5/s), so each one is a
single pass through the pipeline and stages are matched to appends by order. Measurement only:
the wrappers add a few µs per stage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

TRACE_ENV = "SIDEMIRROR_BENCH_TRACE"


# --- in the server child ---------------------------------------------------------------------


def _child(argv: list[str]) -> int:
    import atexit
    import gc

    now = time.monotonic
    marks: list[tuple[str, float]] = []  # in memory: a write per mark would be a cost to measure
    add = marks.append

    def mark(stage: str) -> None:
        add((stage, now()))

    def dump() -> None:
        with open(os.environ[TRACE_ENV], "w") as fh:
            fh.writelines(f"{stage} {t:.6f}\n" for stage, t in marks)
            fh.writelines(f"{g} {a:.6f} {b:.6f}\n" for g, a, b in gcs)

    atexit.register(dump)
    gcs: list[tuple[str, float, float]] = []
    gc_start = [0.0]

    def on_gc(phase: str, info: dict) -> None:  # type: ignore[type-arg]
        if phase == "start":
            gc_start[0] = now()
        else:
            gcs.append((f"gc{info['generation']}", gc_start[0], now()))

    gc.callbacks.append(on_gc)

    from sidemirror.core import store
    from sidemirror.sources.claude import session as claude_session
    from sidemirror.sources.claude import source as claude_source
    from sidemirror.sources.files import merge_order as merge_journal
    from sidemirror.sources.files import tailer, watch
    from sidemirror.web import session_stream

    W = watch._InotifyWatcher
    if hasattr(watch, "_resolve"):  # the fd callback only wakes the task, which drains
        orig_resolve = watch._resolve

        def resolve(waiter):  # type: ignore[no-untyped-def]
            mark("readable")
            orig_resolve(waiter)

        watch._resolve = resolve
    else:  # the fd callback drains
        orig_ready = W._on_readable

        def on_readable(self):  # type: ignore[no-untyped-def]
            mark("readable")
            orig_ready(self)

        W._on_readable = on_readable

    orig_drain = W._drain

    def drain(self):  # type: ignore[no-untyped-def]
        mark("resumed")
        orig_drain(self)
        mark("drained")

    W._drain = drain

    def wrap_async(cls, name: str, before: str, after: str) -> None:  # type: ignore[no-untyped-def]
        orig = getattr(cls, name)

        async def wrapped(self, *a, **k):  # type: ignore[no-untyped-def]
            mark(before)
            try:
                return await orig(self, *a, **k)
            finally:
                mark(after)

        setattr(cls, name, wrapped)

    def wrap_sync(cls, name: str, before: str, after: str) -> None:  # type: ignore[no-untyped-def]
        orig = getattr(cls, name)

        def wrapped(self, *a, **k):  # type: ignore[no-untyped-def]
            mark(before)
            try:
                return orig(self, *a, **k)
            finally:
                mark(after)

        setattr(cls, name, wrapped)

    wrap_async(claude_source.ClaudeSource, "_grew", "grew0", "grew1")
    wrap_async(tailer.JsonlTailer, "poll_async", "read0", "read1")
    wrap_sync(claude_session.ClaudeSession, "_apply", "apply0", "apply1")
    wrap_sync(merge_journal.MergeOrder, "append", "journal0", "journal1")
    wrap_sync(store.Store, "write", "publish0", "publish1")
    wrap_sync(claude_source.ClaudeSource, "_refresh_pid", "pid0", "pid1")
    wrap_async(session_stream._Stream, "send_new_items", "send0", "send1")

    from sidemirror.cli import main

    return main(argv)


# --- the driver ------------------------------------------------------------------------------


async def _drive(args: argparse.Namespace) -> None:
    import aiohttp
    import client
    import peers
    import synth
    from run import PROJECT, SESSION

    root = Path(tempfile.mkdtemp(prefix="sm-trace-"))
    home = root / "home"
    path = home / ".claude/projects" / PROJECT / f"{SESSION}.jsonl"
    synth.seed_session(path, SESSION)
    factory = synth.LineFactory(SESSION)
    trace = root / "trace.txt"
    port = peers.free_port()
    argv = peers.ours_argv(home, port)
    argv[1:3] = [str(Path(__file__).resolve()), "--child"]
    env = {"SIDEMIRROR_TOKEN": peers.TOKEN, TRACE_ENV: str(trace)}
    if os.environ.get(peers.OURS_PYTHONPATH):
        env["PYTHONPATH"] = os.environ[peers.OURS_PYTHONPATH]
    proc, log = peers._spawn("sidemirror", argv, home, env)
    run = peers.Running("sidemirror", proc, port, home, log)
    try:
        await peers.wait_http(run.base + "/health", proc, 60)
        url = await peers.ours_stream_url(run, SESSION)
        watcher = client.SseWatcher(url, peers.AUTH, b"event: snapshot")
        arrivals: list[float] = []
        feed = watcher.seen.feed

        def traced(chunk: bytes) -> None:
            arrivals.append(time.monotonic())
            feed(chunk)

        watcher.seen.feed = traced  # type: ignore[method-assign]
        stop = asyncio.Event()
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(watcher.run(session, stop))
            await asyncio.wait_for(watcher.ready.wait(), 60)
            await asyncio.sleep(1.0)
            t_start = time.monotonic()  # only the measured appends
            app = client.Appender(path, factory.line, args.appends, 1 / args.rate)
            app.start()
            while app.is_alive():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            stop.set()
            task.cancel()
    finally:
        peers.stop(proc)
    lines = [ln for ln in trace.read_text().splitlines() if float(ln.split()[1]) >= t_start]
    _report(app.sent, watcher.seen.first, lines, args)


def _report(sent: dict[int, float], seen: dict[int, float], lines: list[str], args) -> None:  # type: ignore[no-untyped-def]
    from client import percentile

    events: list[tuple[float, str]] = []
    gcs: list[tuple[str, float, float]] = []
    for line in lines:
        parts = line.split()
        if parts[0].startswith("gc"):
            gcs.append((parts[0], float(parts[1]), float(parts[2])))
        else:
            events.append((float(parts[1]), parts[0]))
    events.sort()
    order = sorted(sent)
    rows: list[dict[str, float]] = []
    for i, n in enumerate(order):
        t0 = sent[n]
        t_end = sent[order[i + 1]] if i + 1 < len(order) else t0 + 1
        row: dict[str, float] = {}
        for t, stage in events:
            if t0 <= t < t_end and stage not in row:
                row[stage] = (t - t0) * 1000
        if n in seen:
            row["client"] = (seen[n] - t0) * 1000
        rows.append(row)
    stages = [
        "readable",
        "resumed",
        "drained",
        "grew0",
        "read0",
        "read1",
        "apply0",
        "journal0",
        "journal1",
        "publish0",
        "publish1",
        "apply1",
        "pid0",
        "pid1",
        "grew1",
        "send0",
        "send1",
        "client",
    ]
    print(f"{len(rows)} appends at {args.rate}/s; ms after write() (p50 / p90 / max):")
    prev = None
    for s in stages:
        vals = [r[s] for r in rows if s in r]
        if not vals:
            continue
        step = [r[s] - r[prev] for r in rows if s in r and prev in r] if prev else vals
        print(
            f"  {s:9} at {percentile(vals, 50):7.3f} / {percentile(vals, 90):7.3f} /"
            f" {max(vals):7.3f}   step {percentile(step, 50):7.3f} / {percentile(step, 90):7.3f}"
            f" / {max(step):7.3f}  (n={len(vals)})"
        )
        prev = s
    print("gc in window:", [(g, round((b - a) * 1000, 3)) for g, a, b in gcs][:20])
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(_child(sys.argv[2:]))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--appends", type=int, default=60)
    p.add_argument("--rate", type=float, default=5.0)
    p.add_argument("--dump", default="")
    asyncio.run(_drive(p.parse_args()))


if __name__ == "__main__":
    main()
