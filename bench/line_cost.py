"""What one appended line costs the server's CPU (issue 34), without a browser or a peer beside it.

The fleet phase measures CPU over five minutes with a real side panel and vibedeck on the same two
cores, and runs of the same code differ there by ±2 points. This phase is for comparing two
versions of the server: the fleet's twenty seeded sessions (`fleet.seed_sessions`) in a real
`sidemirror serve`, every session's first line read (its load) before the count starts; then
`LINES` lines a session appended round-robin, twenty every 50 ms (400 a second, as the fleet),
and the server's CPU once it is idle again, divided by the lines. Twice: with no client, and with
the fleet's three streams and the attention stream open. Figures: every thread, and the event
loop's thread alone (its user and system time). Two runs of the same code gave 171 and 200 µs a
line with no client: compare several runs of each version.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import fleet
import peers
import psutil

LINES = 500  # a session's, after its first
EVERY_S = 0.05  # one line to each session this often
IDLE_CPU_S = 0.006  # of CPU in a half-second window: the server has read everything


def _times(pid: int) -> tuple[float, float, float]:
    """(all threads, the main thread's user, its system) CPU seconds so far."""
    main = next(t for t in psutil.Process(pid).threads() if t.id == pid)
    return client.cpu_seconds(pid), main.user_time, main.system_time


async def _idle(pid: int, window_s: float = 0.5) -> None:
    """Until the server's CPU stays under `IDLE_CPU_S` for a window (bounded: 60 s)."""
    deadline = time.monotonic() + 60
    before = client.cpu_seconds(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(window_s)
        now = client.cpu_seconds(pid)
        if now - before < IDLE_CPU_S:
            return
        before = now


async def _streams(run: peers.Running, sessions: list[dict[str, Any]]) -> list[client.SseWatcher]:
    """The fleet's three followed streams (two Claude, one Codex) and the attention stream."""
    claude = [f for f in sessions if f["kind"] == "claude"][:2]
    codex = [f for f in sessions if f["kind"] == "codex"][:1]
    urls = await fleet.stream_urls(run, claude + codex)
    watchers = [client.SseWatcher(u, peers.AUTH, b"event: snapshot") for u in urls]
    watchers.append(client.SseWatcher(run.base + "/api/attention/stream", peers.AUTH, b"\n\n"))
    return watchers


async def _one(root: Path, with_streams: bool) -> dict[str, Any]:
    home = root / f"linecost-{'streams' if with_streams else 'none'}" / "home"
    (home / ".claude/projects").mkdir(parents=True)
    sessions = fleet.seed_sessions(home)
    files = [open(f["path"], "ab", buffering=0) for f in sessions]  # noqa: SIM115
    stop = asyncio.Event()
    try:
        with peers.start_ours(home) as run:
            await peers.wait_http(run.base + "/health", run.proc, 120)
            pid = run.proc.pid
            await _idle(pid)  # the startup index
            for i, (fh, f) in enumerate(zip(files, sessions, strict=True)):
                fh.write(f["make"](i * fleet.STRIDE))
            await _idle(pid)  # each session's load, on its first line
            async with aiohttp.ClientSession() as http:
                tasks: list[asyncio.Task[None]] = []
                if with_streams:
                    watchers = await _streams(run, sessions)
                    tasks, error = await client.start_watchers(http, watchers, stop, 60)
                    if error:
                        return {"error": error}
                before, started = _times(pid), time.monotonic()
                for n in range(1, LINES + 1):
                    for i, (fh, f) in enumerate(zip(files, sessions, strict=True)):
                        fh.write(f["make"](i * fleet.STRIDE + n))
                    await asyncio.sleep(EVERY_S)
                await _idle(pid)
                after = _times(pid)
                stop.set()
                for task in tasks:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
    finally:
        for fh in files:
            fh.close()
    lines = LINES * len(sessions)
    per = [round(1e6 * (a - b) / lines) for a, b in zip(after, before, strict=True)]
    return {
        "lines": lines,
        "seconds": round(time.monotonic() - started, 1),
        "cpu_us_per_line": per[0],
        "main_user_us_per_line": per[1],
        "main_system_us_per_line": per[2],
    }


async def measure(root: Path) -> dict[str, Any]:
    return {"no_client": await _one(root, False), "streams": await _one(root, True)}


def rows(res: dict[str, Any] | None, blank: list[str]) -> list[str]:
    if not res:
        return []
    out = []
    for key, clients in (("no_client", "no client"), ("streams", "3 streams + attention")):
        r = res.get(key, {})
        if "error" in r:
            value = "error: " + str(r["error"])[:60]
        else:
            value = (
                f"{r['cpu_us_per_line']} µs (main thread {r['main_user_us_per_line']} user + "
                f"{r['main_system_us_per_line']} system) over {r['lines']:,} lines"
            )
        label = f"line cost, fleet of 20 at 400 lines/s, {clients}"
        out.append(client.table_row(label, value, blank))
    return out
