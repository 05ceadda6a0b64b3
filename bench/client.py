"""The one client every tool is measured with.

- `Appender`: a thread that appends lines to a transcript on a fixed schedule (bounded count) and
  records, for each marker, `time.monotonic()` (and `time.time()`) just *before* the write.
- `SseWatcher` / `PollWatcher`: aiohttp clients that record the monotonic time at which each
  marker first appears in the bytes of an SSE stream, or of a polled page. Matching is on raw bytes
  (regex `BMK\\d{7}Z`), so the same code works for JSON (ours, vibedeck) and HTML (claude-code-log).
- `RssSampler`: peak RSS of a process tree, sampled with psutil.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import psutil

MARK = re.compile(rb"BMK(\d{7})Z")


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary_ms(latencies_s: list[float], expected: int) -> dict[str, Any]:
    ms = [x * 1000 for x in latencies_s]
    return {
        "n": len(ms),
        "expected": expected,
        "missed": expected - len(ms),
        "p50_ms": _r(percentile(ms, 50)),
        "p90_ms": _r(percentile(ms, 90)),
        "p99_ms": _r(percentile(ms, 99)),
        "max_ms": _r(max(ms) if ms else None),
    }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


class Appender(threading.Thread):
    """Appends `count` lines: `burst` lines `interval` s apart, then `pause` s between bursts.

    `jitter` (0–1) spreads each interval uniformly over `interval × (1 ± jitter)`, the same on
    average, from a generator seeded by `first` (the same schedule every run). A fixed 50 ms
    interval is exactly three 60 Hz frames: every line then met the panel's frame clock at one
    phase, fixed for the run, and write→pixel measured that phase rather than the wait for a
    frame (p50 11.3–14.8 ms between runs of the same code)."""

    def __init__(
        self,
        path: Path,
        make_line: Callable[[int], bytes],
        count: int,
        interval: float,
        *,
        burst: int | None = None,
        pause: float = 0.0,
        first: int = 0,
        per_write: int = 1,
        jitter: float = 0.0,
    ) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.make_line = make_line
        self.count = count
        self.interval = interval
        self.burst = burst or count
        self.pause = pause
        self.first = first
        self.per_write = per_write  # lines per write() (fanout: 20 lines every 10 ms)
        self.jitter = jitter
        self.sent: dict[int, float] = {}
        self.wall: dict[int, float] = {}  # n → time.time(), for clocks of other processes
        self.stop_flag = threading.Event()

    def run(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        rng = random.Random(self.first)
        try:
            n = self.first
            end = self.first + self.count
            next_t = time.monotonic()
            in_burst = 0
            while n < end and not self.stop_flag.is_set():
                k = min(self.per_write, end - n)
                data = b"".join(self.make_line(n + i) for i in range(k))
                t, wall = time.monotonic(), time.time()
                os.write(fd, data)
                for i in range(k):
                    self.sent[n + i] = t
                    self.wall[n + i] = wall
                n += k
                in_burst += k
                next_t += self.interval * (1 + self.jitter * rng.uniform(-1, 1))
                if in_burst >= self.burst:
                    in_burst = 0
                    next_t += self.pause
                delay = next_t - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        finally:
            os.close(fd)


class Seen:
    """First-seen monotonic times of markers (one per watcher)."""

    def __init__(self) -> None:
        self.first: dict[int, float] = {}
        self.count = 0  # every marker occurrence (fanout: delivered events)
        self._tail = b""

    def feed(self, chunk: bytes) -> None:
        t = time.monotonic()
        data = self._tail + chunk
        for m in MARK.finditer(data):
            n = int(m.group(1))
            if n not in self.first:
                self.first[n] = t
                self.count += 1
        self._tail = data[-12:]  # a marker cut between two chunks is found next time


class SseWatcher:
    """Reads an SSE stream; `ready` is set once `ready_pattern` (bytes) has been seen."""

    def __init__(self, url: str, headers: dict[str, str], ready_pattern: bytes) -> None:
        self.url = url
        self.headers = headers
        self.ready_pattern = ready_pattern
        self.seen = Seen()
        self.ready = asyncio.Event()
        self.bytes = 0
        self.resets = 0  # overflow → reset + snapshot
        self.error: str | None = None

    async def run(self, session: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        buf = b""
        try:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
            async with session.get(self.url, headers=self.headers, timeout=timeout) as resp:
                if resp.status != 200:
                    self.error = f"HTTP {resp.status} from {self.url}"
                    self.ready.set()
                    return
                async for chunk in resp.content.iter_any():
                    self.bytes += len(chunk)
                    if not self.ready.is_set():
                        buf = buf[-len(self.ready_pattern) :] + chunk
                        if self.ready_pattern in buf:
                            self.ready.set()
                            # markers already in the backlog (e.g. snapshot) are not new lines
                            continue
                    else:
                        self.seen.feed(chunk)
                        self.resets += chunk.count(b"event: reset")
                    if stop.is_set():
                        return
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self.ready.set()


async def start_watcher(
    session: aiohttp.ClientSession,
    watcher: SseWatcher | PollWatcher,
    stop: asyncio.Event,
    timeout: float,
    late: str = "stream never became ready",
) -> asyncio.Task[None]:
    """Run `watcher` in a task until `stop` and wait up to `timeout` s for it to be ready; if it
    is not by then, its `error` says `late`. The caller checks `watcher.error`."""
    task = asyncio.create_task(watcher.run(session, stop))
    try:
        await asyncio.wait_for(watcher.ready.wait(), timeout)
    except TimeoutError:
        watcher.error = watcher.error or late
    return task


async def start_watchers(
    session: aiohttp.ClientSession, watchers: list[SseWatcher], stop: asyncio.Event, timeout: float
) -> tuple[list[asyncio.Task[None]], str | None]:
    """Run every watcher until `stop`; once all are ready, the tasks and the first error (if any
    could not connect), after the same 1 s settle time every phase gives its clients."""
    tasks = [asyncio.create_task(w.run(session, stop)) for w in watchers]
    await asyncio.wait_for(asyncio.gather(*(w.ready.wait() for w in watchers)), timeout)
    errors = [w.error for w in watchers if w.error]
    if not errors:
        await asyncio.sleep(1.0)
    return tasks, errors[0] if errors else None


class PollWatcher:
    """GETs `url` every `period` s (what a polling live page does) and looks for new markers."""

    def __init__(self, url: str, period: float) -> None:
        self.url = url
        self.period = period
        self.seen = Seen()
        self.ready = asyncio.Event()
        self.polls = 0
        self.error: str | None = None

    async def run(self, session: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                async with session.get(self.url, headers={"Cache-Control": "no-store"}) as resp:
                    body = await resp.read()
                    self.polls += 1
                    if resp.status == 200:
                        if self.ready.is_set():
                            self.seen.feed(body)
                            self.seen._tail = b""
                        self.ready.set()
            except (TimeoutError, aiohttp.ClientError) as exc:
                self.error = f"{type(exc).__name__}: {exc}"
            await asyncio.sleep(max(0.0, self.period - (time.monotonic() - t0)))


class RssSampler(threading.Thread):
    """Peak RSS (bytes) of a process and its children, sampled every `every` s."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.every = every
        self.peak = 0
        self.stop_flag = threading.Event()

    def rss(self) -> int:
        try:
            proc = psutil.Process(self.pid)
            procs = [proc, *proc.children(recursive=True)]
        except psutil.Error:
            return 0
        total = 0
        for p in procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total

    def run(self) -> None:
        while not self.stop_flag.is_set():
            self.peak = max(self.peak, self.rss())
            self.stop_flag.wait(self.every)


def main_thread_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process's main thread (the event loop's, in our server) so far."""
    try:
        for t in psutil.Process(pid).threads():
            if t.id == pid:
                return float(t.user_time + t.system_time)
    except psutil.Error:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children so far."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def table_row(label: str, value: str, blank: list[str]) -> str:
    """One line of the results table for a figure no peer offers (the peers' cells blank)."""
    return "| " + " | ".join([label, value, *blank]) + " |"


def phase_rows(
    name: str,
    result: dict[str, Any] | None,
    blank: list[str],
    cells: Callable[[dict[str, Any]], list[tuple[str, str]]],
) -> list[str]:
    """The table's lines for a phase no peer measures (the peers' cells blank): none when it did
    not run, its error when it failed, else one per (label, value) of `cells(result)`."""
    if not result:
        return []
    if "error" in result:
        return [table_row(name, "error: " + str(result["error"])[:60], blank)]
    return [table_row(label, value, blank) for label, value in cells(result)]
