"""One Claude Code session's files → its log: replay of the merge journal, catch-up, live growth.

Reading and parsing run in a worker thread (a first load may parse megabytes); store writes run
on the event loop. A per-session lock keeps the parser and tailers single-owner throughout.
A transcript too big to parse quickly is read from a sync point near its end (start.py);
item seqs come from byte positions (positions.py), so they do not depend on where a parse
started.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from sidemirror.core.models import SessionItem
from sidemirror.core.store import (
    ItemSink,
    ParseProblem,
    SessionLog,
    SessionUpdate,
    Store,
    state_after,
)
from sidemirror.sources.claude.history import EarlierItems
from sidemirror.sources.claude.merge import merged
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.positions import MAIN, Positions, last_seq_of_line
from sidemirror.sources.claude.start import first_read, skip_ahead
from sidemirror.sources.claude.straddle import EarlierCalls
from sidemirror.sources.files.long_line import mark_cut
from sidemirror.sources.files.merge_order import Entry, MergeOrder, new_epoch
from sidemirror.sources.files.session import FileSession
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

# Raw bytes a load holds at once, over all the session's files (one chunk each while merging):
# records are decoded from the chunk as the parser takes them, so memory during a first load
# of a huge transcript is the items kept plus this, not every record of the file.
LOAD_BUFFER_BYTES = 8 * 1024 * 1024
LOAD_CHUNK_BYTES = 4 * 1024 * 1024  # per read of one file: fewer, larger reads on a big load
SCAN_PAGE_ITEMS = 1000  # items of a skipped part read back at once by a scan
_MAKING_HISTORY = threading.Lock()  # sessions make their `EarlierItems` one at a time


class ClaudeSession(FileSession):
    parser: ClaudeParser
    positions: Positions
    journal: MergeOrder
    starts: dict[str, int]
    keep_from: int
    keep_after: int

    def __init__(
        self,
        store: Store,
        log: SessionLog,
        main: Path,
        journal_dir: Path | None,
        stopping: threading.Event | None = None,
    ) -> None:
        super().__init__(store, log, journal_dir, main, stopping)
        self.agents: dict[str, Path] = {}
        # The parser and tailers are made by the first load (`_build` calls `_fresh`), not here:
        # thousands of sessions are indexed and most are never opened.
        self.tailers: dict[str, JsonlTailer] = {}
        self._history: EarlierItems | None = None

    PARSE_STATE = ("parser", "positions", "journal", "starts", "keep_from", "keep_after")
    __slots__ = ("agents", "tailers", "_history", *PARSE_STATE)

    @property
    def history(self) -> EarlierItems:
        """The skipped part of a huge transcript, read on demand. Made when first needed: its
        locks, gate and prompt index were a kilobyte for each of ten thousand listed sessions,
        nearly all of which have no skipped part."""
        with _MAKING_HISTORY:  # the loop and a scan's worker thread may both ask first
            if self._history is None:
                self._history = EarlierItems(self.main, self.stopping)
            return self._history

    def _drop_parse_state(self) -> None:
        super()._drop_parse_state()
        self.tailers = {}

    def _fresh(self, starts: dict[str, int], keep_from: int) -> None:
        """A parser and tailers for a parse starting at `starts` (file key -> byte offset) that
        keeps the items from main-file offset `keep_from` on (sync.py)."""
        self.starts = starts
        self.keep_from = keep_from
        # Items of the line ending at `keep_from` (the sync point's prompt) and the sub-agent
        # items merged after it need the turn before: they are the skipped part's (sync.py).
        self.keep_after = last_seq_of_line(keep_from) if keep_from else 0
        start = starts.get(MAIN, 0)
        calls = EarlierCalls(self.main, start) if start else None
        self.parser = ClaudeParser(from_start=not start, earlier_call=calls)
        self.positions = Positions()
        self.tailers = {MAIN: self.new_tailer(self.main, starts.get(MAIN, 0))}
        for key, path in self.agents.items():
            self.tailers[key] = self.new_tailer(path, starts.get(key, 0))
        self.journal = MergeOrder(None, "")

    def _feed(self, key: str, end: int, record: object) -> list[SessionItem]:
        items = mark_cut(self.parser.feed(record, key, end))  # a capped line's items say so
        self.positions.number(key, end, items)
        if items and items[0].seq <= self.keep_after:
            return [item for item in items if item.seq > self.keep_after]
        return items

    def add_agent(self, agent_id: str, path: Path) -> bool:
        if agent_id in self.agents or not agent_id:
            return False
        self.agents[agent_id] = path
        if self.tailers:  # already reading (else the first load's `_fresh` makes its tailer)
            self.tailers[agent_id] = self.new_tailer(path)
        return True

    # --- loading (the store's lazy loader, FileSession.load) ---

    def _build(self) -> tuple[str, list[SessionItem], list[ParseProblem]]:
        """Replay the journal if it still matches the files, else rebuild under a new epoch."""
        journal = MergeOrder.read(self.journal_path)
        if journal is not None:
            journal = skip_ahead(journal, self.main, self.agents)
            self._fresh(journal.starts, journal.keep_from)
            replayed = self._replay(journal)
            if replayed is not None:
                items, problems = replayed
                more, more_problems, entries = self._catch_up()
                journal.append(entries)
                self.journal = journal
                return journal.epoch, items + more, problems + more_problems
        return self._build_fresh()

    def _build_fresh(self) -> tuple[str, list[SessionItem], list[ParseProblem]]:
        """Parse under a new epoch: from byte 0, or a huge transcript from near its end."""
        start = first_read(self.main, self.agents)
        # A rebuild means the file was rewritten: what the reader of its skipped part learnt
        # (prompt offsets, parses) is of the old bytes.
        self._history = None
        self._fresh(start.starts, start.keep_from)
        self.journal = MergeOrder(self.journal_path, new_epoch(self.main))
        self.journal.starts = dict(self.starts)
        self.journal.keep_from = self.keep_from
        items, problems, entries = self._catch_up()
        self.journal.entries = entries
        self.journal.rewrite()
        return self.journal.epoch, items, problems

    def _replay(self, journal: MergeOrder) -> tuple[list[SessionItem], list[ParseProblem]] | None:
        items: list[SessionItem] = []
        problems: list[ParseProblem] = []
        feed = self._feed
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
            batch = TailBatch(offset=tailer.offset)
            for end, record in tailer.stream(batch, entry.end, self._chunk_bytes()):
                items += feed(entry.key, end, record)
            if batch.reset or batch.offset != entry.end:
                return None  # what was parsed is dropped with this parser (a rebuild follows)
            problems += batch.problems
        return items, problems

    def _catch_up(self) -> tuple[list[SessionItem], list[ParseProblem], list[Entry]]:
        """Everything the files hold beyond what was read, merged by time: deterministic.

        Streamed: each file is decoded a chunk at a time as the merge takes its records, and one
        journal entry is written per run of consecutive records from one file.
        """
        starts = {key: tailer.offset for key, tailer in self.tailers.items()}
        batches = {key: TailBatch(offset=tailer.offset) for key, tailer in self.tailers.items()}
        chunk = self._chunk_bytes()
        streams = {key: t.stream(batches[key], None, chunk) for key, t in self.tailers.items()}
        items: list[SessionItem] = []
        entries: list[Entry] = []
        feed = self._feed
        last: dict[str, int] = {}
        run_key: str | None = None
        run_end = 0
        for key, end, record in merged(streams):
            if key != run_key:
                if run_key is not None:
                    entries.append(Entry(run_key, run_end, self._inode(run_key)))
                    last[run_key] = run_end
                run_key = key
            run_end = end
            items += feed(key, end, record)
        if run_key is not None:
            entries.append(Entry(run_key, run_end, self._inode(run_key)))
            last[run_key] = run_end
        problems = [p for b in batches.values() for p in b.problems]
        for key, batch in batches.items():
            # Close each file's run at its read offset: trailing blank or bad lines count as read.
            if batch.offset > max(last.get(key, 0), starts[key]):
                entries.append(Entry(key, batch.offset, self._inode(key)))
        return items, problems, entries

    def _chunk_bytes(self) -> int:
        return max(64 * 1024, min(LOAD_CHUNK_BYTES, LOAD_BUFFER_BYTES // len(self.tailers)))

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
            batch = await tailer.poll_async()
            if batch.reset:
                await self._rebuild()
                return True
            return self._apply(key, batch)

    def _apply(self, key: str, batch: TailBatch) -> bool:
        items: list[SessionItem] = []
        for end, record in batch.records:
            items += self._feed(key, end, record)
        if batch.records or batch.errors:
            # Journal first, publish second: a crash in between replays what clients saw.
            self.journal.append([Entry(key, batch.offset, self._inode(key))])
        self._publish(items, batch.problems)
        return bool(items)

    def _scan(self, sink: ItemSink) -> None:
        """A load's items (FileSession._scan), then a huge transcript's skipped part, read back
        a page at a time: the whole session, in bounded memory. Keeps no parse state."""
        try:
            epoch, items, _problems = self._build()
            below, more = self.keep_after + 1, self.keep_from > 0
        finally:
            self._drop_parse_state()
        sink(epoch, items)
        if more:
            self.history.agents = dict(self.agents)
        while more:
            found, more = self.history.before(below, SCAN_PAGE_ITEMS)
            if found:
                sink(epoch, found)
                below = found[0].seq
            more = more and bool(found)

    async def _earlier(self, below: int, count: int) -> tuple[list[SessionItem], bool]:
        """Items of the skipped part below seq `below` (sources/claude/history.py)."""
        below = min(below, self.keep_after + 1)  # never the held items
        self.history.agents = dict(self.agents)
        return await asyncio.to_thread(self.history.before, below, count)

    async def _later(self, above: int, count: int) -> tuple[list[SessionItem], bool]:
        """Items of the skipped part above seq `above`, oldest first (sources/claude/history.py)."""
        self.history.agents = dict(self.agents)
        return await asyncio.to_thread(self.history.after, above, self.keep_after + 1, count)

    async def _rebuild(self) -> None:
        """A file stopped being append-only: start over under a new epoch."""
        epoch, items, problems = await asyncio.to_thread(self._build_fresh)
        self.store.reset(self.log, epoch)
        self._publish(items, problems)

    def _publish(self, items: list[SessionItem], problems: list[ParseProblem]) -> None:
        parser = self.parser
        skipped = self.keep_from
        self.log.skipped_bytes = skipped
        self.log.earlier = self._earlier if skipped else None
        self.log.later = self._later if skipped else None
        # A parse from a sync point saw neither the first prompt nor the start time: the
        # indexed ones (read from the file's head) stay.
        update = SessionUpdate(
            items=items,
            problems=problems,
            title=parser.title or (None if skipped else parser.first_prompt),
            started_at=None if skipped else parser.started_at,
            branch=parser.git_branch,
            state=state_after(items),
        )
        self.store.write(self.log, update)
