"""Where append→event time goes: file write → change notification, outside the server.

Compares `watchfiles.awatch` with the server's settings (step=10 ms, debounce=400 ms, in
sources/files/watch.py) against a bare inotify fd read by the asyncio loop (ctypes, Linux).
Bounded: `--n` writes `--interval` s apart per watcher (default 50 × 0.1 s).
Usage: .bench/venv/bin/python bench/watch_latency.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import struct
import tempfile
import threading
import time
from pathlib import Path

from watchfiles import awatch

IN_MODIFY = 0x00000002
IN_NONBLOCK = 0o4000


def pct(v: list[float], p: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, int(round((len(s) - 1) * p / 100)))] * 1000


def writer(path: Path, n: int, interval: float, sent: list[float]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    for _ in range(n):
        sent.append(time.monotonic())
        os.write(fd, b'{"type":"x"}\n')
        time.sleep(interval)
    os.close(fd)


async def via_watchfiles(d: Path, args: argparse.Namespace) -> list[float]:
    path = d / "a.jsonl"
    path.touch()
    sent: list[float] = []
    got: list[float] = []
    stop = asyncio.Event()
    th = threading.Thread(target=writer, args=(path, args.n, args.interval, sent))
    started = False
    async for _changes in awatch(
        d, stop_event=stop, debounce=400, step=10, rust_timeout=200, yield_on_timeout=True
    ):
        if not started:
            started = True
            th.start()
            continue
        if _changes:
            got.append(time.monotonic())
        if not th.is_alive() and len(got) >= len(sent):
            break
        if time.monotonic() - sent[0] > args.n * args.interval + 5 if sent else False:
            break
    stop.set()
    th.join()
    # each notification answers every write since the previous one: latency of the oldest
    lat, i = [], 0
    for t in got:
        while i < len(sent) and sent[i] <= t:
            lat.append(t - sent[i])
            i += 1
    return lat


async def via_inotify(d: Path, args: argparse.Namespace) -> list[float]:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    path = d / "b.jsonl"
    path.touch()
    fd = libc.inotify_init1(IN_NONBLOCK)
    libc.inotify_add_watch(fd, str(d).encode(), IN_MODIFY)
    loop = asyncio.get_running_loop()
    sent: list[float] = []
    got: list[float] = []
    done = asyncio.Event()

    def ready() -> None:
        t = time.monotonic()
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        off = 0
        while off < len(data):
            _wd, _mask, _cookie, ln = struct.unpack_from("iIII", data, off)
            off += 16 + ln
            got.append(t)
        if len(got) >= args.n:
            done.set()

    loop.add_reader(fd, ready)
    th = threading.Thread(target=writer, args=(path, args.n, args.interval, sent))
    th.start()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), args.n * args.interval + 5)
    loop.remove_reader(fd)
    os.close(fd)
    th.join()
    return [g - s for g, s in zip(got, sent, strict=False)]


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=50)
    p.add_argument("--interval", type=float, default=0.1)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (
            ("watchfiles step=10 debounce=400", via_watchfiles),
            ("inotify fd on the asyncio loop", via_inotify),
        ):
            lat = await fn(Path(tmp), args)
            print(
                f"{name:34s} n={len(lat):3d}  p50 {pct(lat, 50):6.2f} ms  "
                f"p90 {pct(lat, 90):6.2f} ms  p99 {pct(lat, 99):6.2f} ms"
            )


if __name__ == "__main__":
    asyncio.run(main())
