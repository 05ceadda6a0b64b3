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
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from sidemirror.sources.files.watch import (
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_Q_OVERFLOW,
    pick_backend,
    queued,
)

if TYPE_CHECKING:
    from asyncinotify import Inotify, Watch

logger = logging.getLogger(__name__)

REST_S = 0.25  # the folders' watch, between rounds, once a close watch reads followed files


class CloseWatch:
    """Writes to a few named files, reported as soon as they happen (`batches`)."""

    def __init__(self, inotify: Inotify) -> None:
        from asyncinotify import Mask

        self.inotify = inotify
        os.set_blocking(inotify.fd, False)  # as in watch.py: draining needs EAGAIN
        # Writes; and the file's end (deleted, moved), after which the folders' watch reports
        # whatever takes its place there.
        self.mask = Mask.MODIFY | Mask.DELETE_SELF | Mask.MOVE_SELF
        self._watches: dict[Path, Watch] = {}
        self._paths: dict[int, Path] = {}  # by watch descriptor

    @classmethod
    def open(cls) -> CloseWatch | None:
        """A close watch, or None where inotify is not what watches the folders."""
        if pick_backend() != "inotify":
            return None
        from asyncinotify import Inotify

        try:
            return cls(Inotify(cache_size=16))
        except OSError as exc:  # fs.inotify.max_user_instances reached: read on the folders'
            logger.info("no close watch of followed files (%s)", exc)
            return None

    def __contains__(self, path: Path) -> bool:
        return path in self._watches

    def add(self, path: Path) -> None:
        """Watch `path` from now on (again, if it is another file than the one watched)."""
        try:
            watch = self.inotify.add_watch(path, self.mask)
        except OSError:
            return  # gone meanwhile: the folders' watch reports what follows
        old = self._watches.get(path)
        if old is not None and old.wd != watch.wd:
            self._paths.pop(old.wd, None)
        self._watches[path] = watch
        self._paths[watch.wd] = path

    def discard(self, path: Path) -> None:
        watch = self._watches.pop(path, None)
        if watch is not None:
            self._paths.pop(watch.wd, None)
            with contextlib.suppress(OSError):  # the kernel dropped it already (file gone)
                self.inotify.rm_watch(watch)

    def close(self) -> None:
        self.inotify.close()

    async def batches(self) -> AsyncIterator[list[Path]]:
        """The watched files written since the last batch, each once, until cancelled."""
        loop = asyncio.get_running_loop()
        fd = self.inotify.fd
        while True:
            ready: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, _resolve, ready)
            try:
                await ready
            finally:
                loop.remove_reader(fd)
            written = self.take()
            if written:
                yield written

    def take(self) -> list[Path]:
        """The watched files written since the last look, without waiting (a round of the
        folders' watch reads them between its own files)."""
        written: dict[Path, None] = {}
        for event in queued(self.inotify):
            mask = int(event.mask)  # plain ints: a `Mask` & builds an enum member (watch.py)
            if mask & IN_Q_OVERFLOW:  # events were lost: any watched file may have grown
                written.update(dict.fromkeys(self._watches))
                continue
            wd = event.watch.wd if event.watch is not None else -1
            path = self._paths.get(wd)
            if path is None:
                continue  # a watch already replaced or dropped (or its IN_IGNORED)
            if mask & IN_MODIFY:
                written[path] = None
            elif mask & IN_MOVE_SELF:
                self.discard(path)  # the watch would follow the file to where it went
            else:  # deleted (IN_IGNORED follows) or dropped by the kernel
                self._paths.pop(wd, None)
                del self._watches[path]
        # Only writes: the folders' watch reports a file's end, and what takes its place.
        return list(written)


def _resolve(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)
