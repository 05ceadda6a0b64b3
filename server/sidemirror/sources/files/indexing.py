"""Indexing an archive after the server listens: newest files first, a batch at a time.

A heavy user has thousands of transcripts; reading each one's head takes 5-25 s in all, so the
server answers first and indexes after. Files are read in a small thread pool (cold, most of a
file's cost is waiting for the disk) and, when thousands must be read, mostly by a second
interpreter on another core (reader_process.py: the reads are CPU-bound Python); they are handed
to the event loop one batch at a time, so a live event waits at most for one batch's
registration, and the listing fills newest first.
What was read is kept in the file index (`index/files.py`, keyed by path, size and mtime): a
restart reads only the files that changed since, and takes the rest from there.
`/health` reports the sources' progress (`Indexing`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from sidemirror.index.files import FileIndex, FileStat
from sidemirror.sources.files.reader_process import NOTHING, ReaderProcess, dotted_name
from sidemirror.sources.files.regular import not_regular_reason

R = TypeVar("R")
# Reads in flight: enough to hide disk waits. A 10,000-file cold listing took no longer with 2
# than with 4 on a 2-core machine, and each reader thread keeps an allocator arena of its own.
THREADS = 2
BATCH = 32  # files registered on the loop between two chances for live events to run
YIELD_EVERY_S = 0.002  # a reader lets a waiting event loop run at least this often
# From this many files left to read (a cold start of a big archive), a second interpreter reads
# beside the threads (reader_process.py), and takes this share of each chunk's reads.
HELPER_FROM = 1000
HELPER_SHARE = (3, 4)
# Files looked up in the index (one query) and read per step: a restart takes most from the
# index, where a step's cost is the hop to the index's thread, not the rows.
CHUNK = 256
Listed = tuple[Path, FileStat]


@dataclass
class IndexProgress:
    """One source's indexing: files done so far, out of how many (None until listed), and how
    many of those were read from disk rather than taken from the file index."""

    done: int = 0
    total: int | None = None
    read: int = 0

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total


class Indexing:
    """Every source's progress, summed as `/health` reports it. `listed` is set once every
    source has listed its archive: background work that can wait (the search index's backfill)
    waits for it, so a cold start gives the listing the CPU first."""

    def __init__(self) -> None:
        self.parts: list[IndexProgress] = []
        self.listed = asyncio.Event()

    def as_json(self) -> dict[str, int | None]:
        totals = [p.total for p in self.parts]
        total = None if None in totals else sum(t or 0 for t in totals)
        return {
            "done": sum(p.done for p in self.parts),
            "total": total,
            "read": sum(p.read for p in self.parts),
        }


@dataclass
class Remembered(Generic[R]):
    """How one kind of read is kept in the file index under `data_dir`.

    `encode` turns a read into a JSON value, redacted (None: do not keep it); `decode` gives the
    read back from that value (None: the row is of no use, read the file again).
    """

    data_dir: Path
    source: str
    encode: Callable[[R], Any]
    decode: Callable[[Path, Any], R | None]


def index_source(kind: str, host: str | None) -> str:
    """The file index's name for one source's rows: each source keeps (and prunes) only its own,
    and a mirrored host's sources are others than the local ones. The host label is hashed: the
    index holds nothing a redaction would have to look at."""
    if host is None:
        return kind
    return f"{kind}@{hashlib.sha256(host.encode('utf-8')).hexdigest()[:16]}"


def mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def newest_first(paths: Iterable[Path]) -> tuple[list[Listed], list[Path]]:
    """The regular files among `paths` with their stats, newest first, and the paths that are
    not regular files (FIFOs and such: never read). One `stat` a file, following symlinks as
    opening does; a path gone meanwhile is left out. Run it in a thread."""
    listed: list[Listed] = []
    special: list[Path] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not_regular_reason(st.st_mode) is None:
            listed.append((path, FileStat(st.st_size, st.st_mtime_ns)))
        else:
            special.append(path)
    listed.sort(key=lambda item: item[1].mtime_ns, reverse=True)
    return listed, special


async def read_in_batches(
    listed: Sequence[Listed],
    read: Callable[[Path], R | None],
    progress: IndexProgress,
    name: str,
    remembered: Remembered[R] | None = None,
) -> AsyncIterator[list[tuple[Path, R | None]]]:
    """`read` every path (or take it from the file index), yielding batches of `BATCH` in
    order, each counted done once the caller has taken it. Files are looked up and read a
    `CHUNK` at a time, the next chunk while the caller registers this one."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(THREADS, thread_name_prefix=name)
    # The index is only ever used from this one thread: opening it (a check, maybe a rebuild),
    # looking rows up, writing what was read.
    keeper = ThreadPoolExecutor(1, thread_name_prefix=f"{name}-index")
    index: FileIndex | None = None
    if remembered is not None:
        index = await loop.run_in_executor(
            keeper, FileIndex, remembered.data_dir, remembered.source
        )

    def lookup(chunk: Sequence[Listed]) -> list[R | None]:
        if index is None or remembered is None:
            return [None] * len(chunk)
        rows = index.get_many(chunk)
        return [
            None if row is None else remembered.decode(path, row)
            for (path, _), row in zip(chunk, rows, strict=True)
        ]

    def read_some(some: Sequence[Listed]) -> list[tuple[R | None, Any]]:
        out = []
        yielded = time.monotonic()
        for path, _ in some:
            value = read(path)
            row = None
            if remembered is not None and value is not None:
                row = remembered.encode(value)
            out.append((value, row))
            if time.monotonic() - yielded > YIELD_EVERY_S:
                # Hand the interpreter to the event loop if it waits for it: otherwise a
                # reader keeps it up to the 5 ms switch interval, and a live event waits.
                # Not after every file: a sleep(0) lasts the timer slack (~50 µs on Linux),
                # half a file's read.
                time.sleep(0)
                yielded = time.monotonic()
        return out

    helper = _Helper(read, remembered, len(listed))
    if index is not None and not index.has_rows:
        helper.consider(len(listed), len(listed))  # a first start: every file is read

    async def fetch(
        start: int, kept: list[tuple[Path, FileStat, Any]]
    ) -> tuple[list[R | None], list[tuple[Path, FileStat, Any]]]:
        """This chunk's values, and what to keep of those read; `kept` (the chunk before's)
        is written after this chunk's lookup, not before it: the reads wait for the lookup."""
        chunk = listed[start : start + CHUNK]
        looked_up = None
        if index is not None and index.has_rows:
            looked_up = loop.run_in_executor(keeper, lookup, chunk)
        if index is not None and kept:
            keeper.submit(index.put, kept)
        values: list[R | None]
        if looked_up is None:  # nothing to look up on a first start: no hop to that thread
            values = [None] * len(chunk)
        else:
            values = await looked_up
        unknown = [i for i, value in enumerate(values) if value is None]
        progress.read += len(unknown)
        helper.consider(len(unknown), len(listed) - start)
        fresh: list[tuple[Path, FileStat, Any]] = []
        by_helper, unknown = helper.split(unknown)
        # One task per thread, not one per file: ten thousand futures cost more than reads.
        shares = [unknown[k::THREADS] for k in range(THREADS) if unknown[k::THREADS]]
        tasks = [loop.run_in_executor(pool, read_some, [chunk[i] for i in s]) for s in shares]
        again = await helper.read_share(chunk, by_helper, values, fresh) if by_helper else []
        if again:
            tasks.append(loop.run_in_executor(pool, read_some, [chunk[i] for i in again]))
            shares.append(again)
        for share, results in zip(shares, await asyncio.gather(*tasks), strict=True):
            for i, (value, row) in zip(share, results, strict=True):
                values[i] = value
                if row is not None:
                    fresh.append((chunk[i][0], chunk[i][1], row))
        return values, fresh

    pending: asyncio.Future[tuple[list[R | None], list[tuple[Path, FileStat, Any]]]] | None
    pending = asyncio.ensure_future(fetch(0, [])) if listed else None
    try:
        for start in range(0, len(listed), CHUNK):
            assert pending is not None
            values, fresh = await pending
            if start + CHUNK < len(listed):
                pending = asyncio.ensure_future(fetch(start + CHUNK, fresh))
            else:
                pending = None
                if index is not None and fresh:
                    keeper.submit(index.put, fresh)
            paths = [p for p, _ in listed[start : start + CHUNK]]
            for at in range(0, len(values), BATCH):
                # Live events run between two batches: one batch's registration is the
                # longest they wait (a fetch done already would not suspend the loop).
                await asyncio.sleep(0)
                part = values[at : at + BATCH]
                yield list(zip(paths[at : at + BATCH], part, strict=True))
                progress.done += len(part)
        if index is not None:
            await loop.run_in_executor(keeper, index.keep_only, [p for p, _ in listed])
        await helper.finish()
    finally:
        # Stopping mid-index: drop the queued reads; the running ones end on their own (each
        # reads at most a few windows of a few files), so shutdown never waits for them.
        if pending is not None:
            pending.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        if index is not None:
            keeper.submit(index.close)
        keeper.shutdown(wait=False)
        helper.close()


class _Helper:
    """The reader process of one indexing run: started once a chunk shows that most files must
    be read and many are left, used once it is ready, stopped at the end."""

    def __init__(
        self, read: Callable[[Path], Any], remembered: Remembered[Any] | None, total: int
    ) -> None:
        self._process: ReaderProcess | None = None
        self._started: asyncio.Future[bool] | None = None
        self._can = (
            remembered is not None
            and total >= HELPER_FROM
            # Another process finds the functions by name: module-level ones only.
            and all("<" not in dotted_name(f) for f in (read, remembered.encode))
        )
        self._read, self._remembered = read, remembered

    def consider(self, unknown: int, left: int) -> None:
        if not self._can or self._started is not None:
            return
        if unknown >= CHUNK // 2 and left >= HELPER_FROM:
            assert self._remembered is not None
            self._process = ReaderProcess(self._read, self._remembered.encode)
            self._started = asyncio.ensure_future(self._process.start())

    @property
    def ready(self) -> bool:
        started = self._started
        if started is None or not started.done() or started.cancelled():
            return False
        # A start that raised what it does not expect leaves the reads to the threads.
        return started.exception() is None and started.result()

    async def read(self, paths: Sequence[Path]) -> list[Any] | None:
        return None if self._process is None else await self._process.read(paths)

    def split(self, unknown: list[int]) -> tuple[list[int], list[int]]:
        """The files to read (indices into a chunk): the process's share, the threads' share."""
        if not self.ready or len(unknown) < 2:
            return [], unknown
        cut = len(unknown) * HELPER_SHARE[0] // HELPER_SHARE[1]
        return unknown[:cut], unknown[cut:]

    async def read_share(
        self,
        chunk: Sequence[Listed],
        share: list[int],
        values: list[Any],
        fresh: list[tuple[Path, FileStat, Any]],
    ) -> list[int]:
        """Read the files at `share` of `chunk` in the process, into `values` (and into `fresh`
        what is to be kept); returns those left to the threads: a value only a read here gives
        (not kept, or unreadable), or the whole share if the process failed."""
        assert self._remembered is not None
        answers = await self.read([chunk[i][0] for i in share])
        if answers is None:
            return share
        again = []
        for i, answer in zip(share, answers, strict=True):
            if isinstance(answer, list):
                values[i] = self._remembered.decode(chunk[i][0], answer[0])
                if values[i] is not None:
                    fresh.append((chunk[i][0], chunk[i][1], answer[0]))
            if answer != NOTHING and values[i] is None:
                again.append(i)
        return again

    async def finish(self) -> None:
        """Once every file is read: a process still starting is stopped, not waited for."""
        if self._started is not None and not self._started.done():
            self._started.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._started
        if self._process is not None:
            await self._process.finish()

    def close(self) -> None:
        if self._started is not None and not self._started.done():
            self._started.cancel()
        if self._process is not None:
            self._process.close()
