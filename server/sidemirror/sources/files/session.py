"""What every file-backed session and file-following source share, whatever the format.

A session is indexed from a file's stats and head, and parsed only when a client first reads
it (`FileSession.load`, the store's lazy loader); a source runs background tasks (watching,
polling) from `start` to `stop` (`BackgroundTasks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from sidemirror.core.models import SessionItem
from sidemirror.core.store import ItemSink, ParseProblem, SessionLog, Store
from sidemirror.sources.files.tailer import JsonlTailer


class FileSession:
    """A session read from files: `_build` parses (in a thread), `_publish` writes the store."""

    # The attributes a parse leaves on the session (set by `_build`). A scan drops them: it
    # keeps nothing, and the search index scans every session nobody opened (a parser each,
    # ~50 KB, kept for ten thousand sessions, was hundreds of MB).
    PARSE_STATE: tuple[str, ...] = ()
    # Slots, not a dict per session: an archive lists ten thousand of them.
    __slots__ = ("store", "log", "journal_dir", "_main", "stopping", "_lock", "loaded")

    def __init__(
        self,
        store: Store,
        log: SessionLog,
        journal_dir: Path | None,
        main: Path,
        stopping: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.log = log
        self.journal_dir = journal_dir
        self._main = str(main)  # a `Path` is ~500 bytes more, for each of ten thousand
        self.stopping = stopping  # its source's `BackgroundTasks.stopping`
        self._lock: asyncio.Lock | None = None
        self.loaded = False
        log.scan = self.scan
        log.source_file = self._main  # the same string: no more memory a session

    @property
    def main(self) -> Path:
        """The session's own file (sub-agents may add more)."""
        return Path(self._main)

    @property
    def lock(self) -> asyncio.Lock:
        """Held while the session is parsed or written. Made when first used: ten thousand
        sessions listed and never read need none."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    @property
    def journal_path(self) -> Path | None:
        """The persisted merge order (files/merge_order.py), named by the main file's path.
        Worked out when first needed: most of the sessions indexed are never read."""
        if self.journal_dir is None:
            return None
        digest = hashlib.sha256(self._main.encode("utf-8")).hexdigest()[:16]
        return self.journal_dir / f"{digest}.jsonl"

    def new_tailer(self, path: Path, offset: int = 0) -> JsonlTailer:
        """A tailer of one of this session's files: JSON objects only, and its reads end when
        the source stops."""
        return JsonlTailer(path, offset=offset, objects_only=True, cancel=self.stopping)

    async def load(self, _log: SessionLog | None = None) -> None:
        async with self.lock:
            if self.loaded:
                return
            epoch, items, problems = await asyncio.to_thread(self._build)
            self.loaded = True
            self.store.start_epoch(self.log, epoch)
            self._publish(items, problems)

    async def scan(self, sink: ItemSink) -> bool:
        """Every item a load would give, to `sink(epoch, items)`, without loading the session
        (nothing reaches the store): the search index reads sessions nobody opened this way.
        The epoch is the one a load will use (kept in the session's journal). False when the
        session is loaded: its items are the store's."""
        async with self.lock:
            if self.loaded:
                return False
            await asyncio.to_thread(self._scan, sink)
            return True

    def _scan(self, sink: ItemSink) -> None:
        try:
            epoch, items, _problems = self._build()
        finally:
            self._drop_parse_state()
        sink(epoch, items)

    def _drop_parse_state(self) -> None:
        """Back to the state of a session never read (the next load parses afresh)."""
        for name in self.PARSE_STATE:
            if hasattr(self, name):
                delattr(self, name)

    def _build(self) -> tuple[str, list[SessionItem], list[ParseProblem]]:
        """The session's epoch, items and the lines that could not be read (or were cut), read
        from its files. Tailers hand over JSON objects only, so parsers count no errors."""
        raise NotImplementedError

    def _publish(self, items: list[SessionItem], problems: list[ParseProblem]) -> None:
        raise NotImplementedError


class BackgroundTasks:
    """A source's long-running tasks, cancelled and awaited together when it stops."""

    def __init__(self) -> None:
        # Finished ones leave (a read spawned per followed session would pile up otherwise).
        self._tasks: set[asyncio.Task[None]] = set()
        # Set first when the source stops: a read running in a worker thread (a huge line, a
        # first load) ends at its next chunk instead of holding the process's exit.
        self.stopping = threading.Event()

    def spawn(self, coro: Coroutine[Any, Any, None], name: str | None = None) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        self.stopping.set()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
