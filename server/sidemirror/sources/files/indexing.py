"""Indexing an archive after the server listens: newest files first, a batch at a time.

A heavy user has thousands of transcripts; reading each one's head takes 5-25 s in all, so the
server answers first and indexes after. Files are read in a small thread pool (cold, most of a
file's cost is waiting for the disk) and handed to the event loop one batch at a time, so a live
event waits at most for one batch's registration, and the listing fills newest first.
`/health` reports the sources' progress (`Indexing`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

R = TypeVar("R")
THREADS = 4  # enough reads in flight to hide disk waits; more would crowd the loop's GIL turns
BATCH = 64  # files registered on the loop between two chances for live events to run


@dataclass
class IndexProgress:
    """One source's indexing: files read so far, out of how many (None until listed)."""

    done: int = 0
    total: int | None = None

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total


class Indexing:
    """Every source's progress, summed as `/health` reports it."""

    def __init__(self) -> None:
        self.parts: list[IndexProgress] = []

    def as_json(self) -> dict[str, int | None]:
        totals = [p.total for p in self.parts]
        total = None if None in totals else sum(t or 0 for t in totals)
        return {"done": sum(p.done for p in self.parts), "total": total}


def mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def newest_first(paths: Sequence[Path]) -> list[Path]:
    """`paths` by modification time, newest first (stats every file: run it in a thread)."""
    return [p for _, p in sorted(((mtime(p), p) for p in paths), reverse=True)]


async def read_in_batches(
    paths: Sequence[Path], read: Callable[[Path], R], progress: IndexProgress, name: str
) -> AsyncIterator[list[tuple[Path, R]]]:
    """`read` every path in a bounded pool, yielding each batch in order, and counting it done
    once the caller has taken it. The next batch is read while the caller registers this one."""
    pool = ThreadPoolExecutor(THREADS, thread_name_prefix=name)

    def submit(start: int) -> list[asyncio.Future[R]]:
        chunk = paths[start : start + BATCH]
        return [asyncio.wrap_future(pool.submit(read, p)) for p in chunk]

    try:
        pending = submit(0)
        for start in range(0, len(paths), BATCH):
            results = await asyncio.gather(*pending)
            pending = submit(start + BATCH)
            yield list(zip(paths[start : start + BATCH], results, strict=True))
            progress.done += len(results)
    finally:
        # Stopping mid-index: drop the queued reads; the running ones end on their own (each
        # reads at most a few windows of one file), so shutdown never waits for them.
        pool.shutdown(wait=False, cancel_futures=True)
