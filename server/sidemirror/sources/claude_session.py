"""One Claude Code session's files → its log: replay of the merge journal, catch-up, live growth.

Reading and parsing run in a worker thread (a first load may parse megabytes); store writes run
on the event loop. A per-session lock keeps the parser and tailers single-owner throughout.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..models import SessionItem
from ..store import SessionLog, Store
from .claude import MAIN, ClaudeParser
from .merge_journal import Entry, MergeJournal
from .tailer import JsonlTailer, TailBatch

# A run of records read from one file, in order: (file key, [(end offset, record)]).
Run = tuple[str, list[tuple[int, Any]]]


def new_epoch(main: Path) -> str:
    """Short ASCII, from the file's identity plus the time: never equal to an earlier epoch."""
    try:
        st = main.stat()
        ident = f"{st.st_dev}:{st.st_ino}"
    except OSError:
        ident = str(main)
    return hashlib.sha256(f"{ident}:{time.time_ns()}".encode()).hexdigest()[:8]


class ClaudeSession:
    def __init__(self, store: Store, log: SessionLog, main: Path, journal: Path | None) -> None:
        self.store = store
        self.log = log
        self.main = main
        self.journal_path = journal
        self.agents: dict[str, Path] = {}
        self.lock = asyncio.Lock()
        self.loaded = False
        self._fresh()

    def _fresh(self) -> None:
        self.parser = ClaudeParser()
        self.tailers: dict[str, JsonlTailer] = {MAIN: JsonlTailer(self.main)}
        for key, path in self.agents.items():
            self.tailers[key] = JsonlTailer(path)
        self.journal = MergeJournal(None, "")

    def add_agent(self, agent_id: str, path: Path) -> bool:
        if agent_id in self.agents or not agent_id:
            return False
        self.agents[agent_id] = path
        self.tailers[agent_id] = JsonlTailer(path)
        return True

    # --- loading (the store's lazy loader) ---

    async def load(self, _log: SessionLog | None = None) -> None:
        async with self.lock:
            if self.loaded:
                return
            epoch, items, errors = await asyncio.to_thread(self._build)
            self.loaded = True
            if self.log.items:
                self.store.reset(self.log, epoch)
            else:
                self.log.epoch = epoch  # nothing published yet under the old epoch
            self._publish(items, errors)

    def _build(self) -> tuple[str, list[SessionItem], int]:
        """Replay the journal if it still matches the files, else rebuild under a new epoch."""
        journal = MergeJournal.read(self.journal_path)
        if journal is not None:
            replayed = self._replay(journal)
            if replayed is not None:
                items, errors = replayed
                more, more_errors, entries = self._catch_up()
                journal.append(entries)
                self.journal = journal
                return journal.epoch, items + more, errors + more_errors
            self._fresh()
        self.journal = MergeJournal(self.journal_path, new_epoch(self.main))
        items, errors, entries = self._catch_up()
        self.journal.entries = entries
        self.journal.rewrite()
        return self.journal.epoch, items, errors

    def _replay(self, journal: MergeJournal) -> tuple[list[SessionItem], int] | None:
        items: list[SessionItem] = []
        errors = 0
        for entry in journal.entries:
            tailer = self.tailers.get(entry.key)
            if tailer is None:
                return None  # a file the journal names is gone
            try:
                st = os.stat(tailer.path)
            except OSError:
                return None
            if st.st_ino != entry.inode or st.st_size < entry.end or entry.end < tailer.offset:
                return None
            batch = tailer.poll(limit=entry.end)
            if batch.reset or batch.offset != entry.end:
                return None
            errors += batch.errors
            for _end, record in batch.records:
                items += self.parser.feed(record, entry.key)
        return items, errors + self.parser.errors

    def _catch_up(self) -> tuple[list[SessionItem], int, list[Entry]]:
        """Everything the files hold beyond what was read, merged by time: deterministic."""
        starts = {key: tailer.offset for key, tailer in self.tailers.items()}
        batches = {key: tailer.poll() for key, tailer in self.tailers.items()}
        errors = sum(b.errors for b in batches.values())
        items: list[SessionItem] = []
        entries: list[Entry] = []
        before = self.parser.errors
        last: dict[str, int] = {}
        for key, records in _merge(batches):
            for _end, record in records:
                items += self.parser.feed(record, key)
            entries.append(Entry(key, records[-1][0], self._inode(key)))
            last[key] = records[-1][0]
        for key, batch in batches.items():
            # Close each file's run at its read offset: trailing blank or bad lines count as read.
            if batch.offset > max(last.get(key, 0), starts[key]):
                entries.append(Entry(key, batch.offset, self._inode(key)))
        return items, errors + self.parser.errors - before, entries

    def _inode(self, key: str) -> int:
        ident = self.tailers[key].identity
        return ident[1] if ident else 0

    # --- live growth ---

    async def on_change(self, key: str) -> bool:
        """A file of this session changed; returns True if items were published."""
        if not self.loaded:
            await self.load()
            return bool(self.log.items)
        async with self.lock:
            tailer = self.tailers.get(key)
            if tailer is None:
                return False
            batch = await asyncio.to_thread(tailer.poll)
            if batch.reset:
                await self._rebuild()
                return True
            return self._apply(key, batch)

    def _apply(self, key: str, batch: TailBatch) -> bool:
        before = self.parser.errors
        items: list[SessionItem] = []
        for _end, record in batch.records:
            items += self.parser.feed(record, key)
        if batch.records or batch.errors:
            # Journal first, publish second: a crash in between replays what clients saw.
            self.journal.append([Entry(key, batch.offset, self._inode(key))])
        self._publish(items, batch.errors + self.parser.errors - before)
        return bool(items)

    async def _rebuild(self) -> None:
        """A file stopped being append-only: start over from byte 0 under a new epoch."""
        self._fresh()
        self.journal = MergeJournal(self.journal_path, new_epoch(self.main))
        items, errors, entries = await asyncio.to_thread(self._catch_up)
        self.journal.entries = entries
        self.journal.rewrite()
        self.store.reset(self.log, self.journal.epoch)
        self._publish(items, errors)

    def _publish(self, items: list[SessionItem], errors: int) -> None:
        if errors:
            self.store.count_parse_error(errors)
        for item in items:
            self.store.append(self.log, item)
        parser = self.parser
        self.log.title = parser.title or parser.first_prompt or self.log.title
        self.log.started_at = self.log.started_at or parser.started_at
        if items:
            self.store.set_state(
                self.log, "idle" if items[-1].type == "turn_complete" else "running"
            )
        ws = self.store.workspace(self.log.workspace_id)
        if ws is not None and parser.git_branch:
            ws.branch = parser.git_branch


def _merge(batches: dict[str, TailBatch]) -> Iterator[Run]:
    """Records of all files in timestamp order (ties: session file first, then agents by id).

    Records without a timestamp keep their place after the record before them in their file.
    """

    def keyed(
        key: str, rank: int, batch: TailBatch
    ) -> Iterator[tuple[str, int, int, str, int, Any]]:
        ts = ""
        for index, (end, record) in enumerate(batch.records):
            stamp = record.get("timestamp") if isinstance(record, dict) else None
            ts = stamp if isinstance(stamp, str) and stamp > ts else ts
            yield (ts, rank, index, key, end, record)

    ranked = sorted(batches, key=lambda k: (k != MAIN, k))
    streams = [keyed(k, rank, batches[k]) for rank, k in enumerate(ranked)]
    run_key: str | None = None
    run: list[tuple[int, Any]] = []
    for _ts, _rank, _index, key, end, record in heapq.merge(*streams):
        if key != run_key and run:
            assert run_key is not None
            yield run_key, run
            run = []
        run_key = key
        run.append((end, record))
    if run and run_key is not None:
        yield run_key, run
