"""The files of followed sessions, watched one by one so their writes are read the moment they
land, while the folders' watch (watch.py) rests between its rounds.

With twenty agents writing at once, reading every file at every write was most of the server's
CPU: each line cost a wake-up of the loop, a stat, an open and a read, a journal write, a store
write and a state refresh. A session no client streams needs none of that at once: its state,
title, totals and search rows may be a quarter of a second late, and the lines written
meanwhile cost one read. So the folders' watch rests `REST_S` after each round it reports, and
the files a client follows (its session's stream, or its workspace's) get a watch of their own,
on an inotify instance of their own: nothing of theirs waits for the rest.

A followed file's write still waits for the round's step under way: one file's lines since the
last round, read and published in one go. Each read of a file costs ~0.2 ms of the loop whatever
it holds (the read, the merge order's line, the store's write and state), so the rest sets how
many there are. In the fleet bench (60 s, ours only), an eighth of a second took 18.7 % of a
core, a quarter 17.1 % and a half 17.2 %; followed events' p99 was 8-10 ms, 6-8 ms and 8-12 ms.
So a quarter: a session nobody streams is at most that late in the Sessions view, its attention
and its search rows.

`FileSource` decides which files are followed (files/source.py); this only watches them. Linux
only: elsewhere (and when an instance cannot be had) there is no close watch, and the folders'
watch does not rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from sidemirror.sources.files.watch import (
    IN_DELETE_SELF,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_Q_OVERFLOW,
    pick_backend,
)

if TYPE_CHECKING:
    from inotify_simple import INotify

logger = logging.getLogger(__name__)

REST_S = 0.25  # the folders' watch, between rounds, once a close watch reads followed files

# Writes; and the file's end (deleted, moved), after which the folders' watch reports whatever
# takes its place there.
_MASK = IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF


class CloseWatch:
    """Writes to a few named files, reported as soon as they happen (`batches`)."""

    def __init__(self, inotify: INotify) -> None:
        self.inotify = inotify
        self.fd = inotify.fileno()
        self._watches: dict[Path, int] = {}  # watch descriptors, by path
        self._paths: dict[int, Path] = {}  # by watch descriptor
        self._written: dict[Path, None] = {}  # read from the fd, not taken yet (in order)
        self._loop: asyncio.AbstractEventLoop | None = None  # reading the fd, while `batches` runs
        self._waiter: asyncio.Future[None] | None = None

    @classmethod
    def open(cls) -> CloseWatch | None:
        """A close watch, or None where inotify is not what watches the folders."""
        if pick_backend() != "inotify":
            return None
        from inotify_simple import INotify

        try:
            return cls(INotify(nonblocking=True))
        except OSError as exc:  # fs.inotify.max_user_instances reached: read on the folders'
            logger.info("no close watch of followed files (%s)", exc)
            return None

    def __contains__(self, path: Path) -> bool:
        return path in self._watches

    def add(self, path: Path) -> None:
        """Watch `path` from now on (again, if it is another file than the one watched)."""
        try:
            wd = self.inotify.add_watch(path, _MASK)
        except OSError:
            return  # gone meanwhile: the folders' watch reports what follows
        old = self._watches.get(path)
        if old is not None and old != wd:
            self._paths.pop(old, None)
        self._watches[path] = wd
        self._paths[wd] = path

    def discard(self, path: Path) -> None:
        wd = self._watches.pop(path, None)
        if wd is not None:
            self._paths.pop(wd, None)
            with contextlib.suppress(OSError):  # the kernel dropped it already (file gone)
                self.inotify.rm_watch(wd)

    def close(self) -> None:
        self._stop_reading()
        self.inotify.close()

    async def batches(self) -> AsyncIterator[list[Path]]:
        """The watched files written since the last batch, each once, until cancelled.

        The fd stays registered with the loop for as long as this runs, and each time it turns
        readable everything queued is read at once (so it is readable no more: the loop does
        not spin). Registering it for each wait and removing it after cost as much as reading
        the events, at one wait per followed line."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        loop.add_reader(self.fd, self._readable)
        try:
            while True:
                if not self._written:
                    self._waiter = loop.create_future()
                    try:
                        await self._waiter
                    finally:
                        self._waiter = None
                written = self.take()
                if written:
                    yield written
        finally:
            self._stop_reading()

    def take(self) -> list[Path]:
        """The watched files written since the last look, without waiting (a round of the
        folders' watch reads them between its own files)."""
        self._read()
        written, self._written = list(self._written), {}
        # Only writes: the folders' watch reports a file's end, and what takes its place.
        return written

    def _readable(self) -> None:
        self._read()
        if self._written and self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _stop_reading(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.fd)
            self._loop = None

    def _read(self) -> None:
        """Everything the kernel holds for this watch, into `_written`."""
        for wd, mask, _cookie, _name in self.inotify.read(timeout=0):
            if mask & IN_Q_OVERFLOW:  # events were lost: any watched file may have grown
                self._written.update(dict.fromkeys(self._watches))
                continue
            path = self._paths.get(wd)
            if path is None:
                continue  # a watch already replaced or dropped (or its IN_IGNORED)
            if mask & IN_MODIFY:
                self._written[path] = None
            elif mask & IN_MOVE_SELF:
                self.discard(path)  # the watch would follow the file to where it went
            else:  # deleted (IN_IGNORED follows) or dropped by the kernel
                self._paths.pop(wd, None)
                del self._watches[path]
