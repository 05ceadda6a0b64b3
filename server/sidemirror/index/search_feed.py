"""What fills the search index: every item the store publishes (live, within one write batch),
and in the background, at low priority, every session nobody opened (read through
`SessionLog.scan` without loading it) and the skipped part of huge transcripts.

Text indexed is the item's redacted text (the store's; `redact_item_fields` runs on what a scan
reads, as `Store.append` does), so the index never holds what the API would not show.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable

from sidemirror.core.free_memory import release_free_memory
from sidemirror.core.hub import ItemPublished, LogReset, Message
from sidemirror.core.models import (
    ErrorEvent,
    PlanEvent,
    SessionItem,
    SystemEvent,
    ToolResultEvent,
    ToolUseEvent,
)
from sidemirror.core.redact_fields import redact_item_fields
from sidemirror.core.store import SessionLog, Store
from sidemirror.core.totals import SessionTotals
from sidemirror.index.search import SearchIndex
from sidemirror.index.search_tables import Doc

logger = logging.getLogger(__name__)

MAX_BODY_CHARS = 32_000  # of one item's text: the rest of a huge output is not searched
FILL_BATCH_ITEMS = 500  # items of a loaded session indexed per step
# The backfill leaves the loop and the disk to live work: a pause after each this much filling
# (a pause after every session cost 10,000 small sessions 200 s of sleep, their build 5 min).
# Its CPU is capped by the writer (index/search.py's BUILD_CORES), which paces it.
PAUSE_EVERY_S = 0.25
PAUSE_S = 0.02
IDLE_RESCAN_S = 5.0  # how often an idle backfill looks for sessions that grew unopened
# Counting what the index holds looks at every session: with ten thousand, a panel or script
# polling /health would keep a core busy. Counted at most this often.
PROGRESS_EVERY_S = 1.0
# The backfill starts this long after the index opens: a client's first reads at start (a
# panel reopening) go first, not behind a scan of the session they open.
BACKFILL_DELAY_S = 2.0
# Live rows are gathered for this long (or up to this many) and written in one transaction: an
# FTS5 commit costs more than its rows. Appending a fleet's rows (400 a second) to an index of
# 20,000 cost 150 µs of CPU a row in commits of 100 (a quarter second's), 105 µs in commits of
# 400 and 87 µs in commits of 1,000; in the fleet bench (5 min) the writer took 6.4 % of a core
# gathering for 1 s, 4.8 % for 2 s. A search first writes what is gathered (`caught_up`), so it
# still finds what the user just saw arrive.
LIVE_GATHER_S = 2.0
LIVE_GATHER_ROWS = 2000
CAUGHT_UP_WAIT_S = 5.0  # a search waits this long at most for live rows to be written


def searchable_text(item: SessionItem) -> str:
    """The text of an item a user would search for ("" for items with none)."""
    if isinstance(item, ToolUseEvent):
        parts = [item.name, item.input]
        for diff in item.diffs or ([item.diff] if item.diff is not None else []):
            parts.append(diff.path)  # every file of a patch of several
            parts += [line[1:] for h in diff.hunks for line in h.lines if line[:1] in "+-"]
        text = "\n".join(parts)
    elif isinstance(item, ToolResultEvent):
        text = item.output
    elif isinstance(item, ErrorEvent):
        text = item.message
    elif isinstance(item, PlanEvent):
        text = "\n".join(entry.content for entry in item.entries)
    elif isinstance(item, SystemEvent):
        text = item.content
    else:
        text = getattr(item, "content", "")
    return text[:MAX_BODY_CHARS] if isinstance(text, str) else ""


def docs_of(log: SessionLog, epoch: str, items: Iterable[SessionItem]) -> list[Doc]:
    docs = []
    for item in items:
        body = searchable_text(item)
        if body.strip():
            docs.append(
                Doc(log.workspace_id, log.session_id, epoch, item.seq, item.type, item.ts, body)
            )
    return docs


class Stopped(Exception):
    """Raised into a scan's worker thread when the feed stops: the scan ends at its next batch."""


class SearchFeed:
    """Keeps `index` current with `store`: a store tap for live items, a task for the rest."""

    def __init__(self, store: Store, index: SearchIndex) -> None:
        self.store = store
        self.index = index
        self._task: asyncio.Task[None] | None = None
        self._filling: dict[tuple[str, str], asyncio.Future[None]] = {}
        self._pending: list[Doc] = []  # live rows gathered, written as one batch
        self._due: asyncio.TimerHandle | None = None  # when `_pending` is written
        self.ready = asyncio.Event()  # set after the first full pass over every session
        self._stopped = False
        self._counted: tuple[float, dict[str, int]] | None = None  # (when, progress)
        self._refill: asyncio.Task[None] | None = None
        loop = asyncio.get_running_loop()

        def rebuilt() -> None:  # the index's writer thread
            with contextlib.suppress(RuntimeError):  # the loop closed: the server stops
                loop.call_soon_threadsafe(self._rebuilt)

        index.on_rebuilt = rebuilt

    def tap(self, log: SessionLog, message: Message) -> None:
        """A store tap (runs on the loop for every message the store publishes)."""
        if isinstance(message, ItemPublished):
            docs = docs_of(log, log.epoch, [message.item])
            if docs and not self._pending:
                self._due = asyncio.get_running_loop().call_later(LIVE_GATHER_S, self._flush)
            self._pending += docs
            if len(self._pending) >= LIVE_GATHER_ROWS:
                self._flush()
        elif isinstance(message, LogReset):
            self._flush()  # rows of the old epoch first, then their removal
            self.index.keep_epoch(log.workspace_id, log.session_id, message.epoch)

    def _flush(self) -> None:
        if self._due is not None:
            self._due.cancel()
            self._due = None
        docs, self._pending = self._pending, []
        self.index.add_live(docs)

    def start(self) -> None:
        self._task = asyncio.create_task(self._backfill(), name="search-backfill")

    async def stop(self) -> None:
        self._stopped = True
        self._flush()  # rows gathered are written before the index stops
        for task in (self._task, self._refill):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._refill = None

    def _rebuilt(self) -> None:
        """The index was built afresh (it was damaged). The backfill finds every session it
        reads missing and indexes it again; loaded sessions it does not read (ingest journals,
        indexed as their load published them) are indexed again here."""
        self._counted = None
        loaded = [
            log
            for ws in self.store.workspaces.values()
            for log in ws.sessions.values()
            if log.scan is None and log.loader is not None and log.has_items
        ]
        if loaded and not self._stopped:
            self._refill = asyncio.create_task(self._fill_each(loaded), name="search-refill")

    async def _fill_each(self, logs: list[SessionLog]) -> None:
        for log in logs:
            try:
                await self.fill(log)
            except Exception:  # one unreadable session never stops the rest
                logger.exception("search: could not index session %s", log.session_id)

    def progress(self) -> dict[str, int]:
        """Sessions indexed whole out of those known (`/health`: the index is filling until
        they are equal), as counted within the last `PROGRESS_EVERY_S`."""
        now = time.monotonic()
        if self._counted is None or now - self._counted[0] >= PROGRESS_EVERY_S:
            logs = [log for ws in self.store.workspaces.values() for log in ws.sessions.values()]
            done = sum(1 for log in logs if self.current(log))
            self._counted = (now, {"done": done, "total": len(logs)})
        return self._counted[1]

    def current(self, log: SessionLog) -> bool:
        """Whether the index holds the whole session (live items keep a loaded one current)."""
        if log.scan is None and log.loader is not None:
            # A session its source cannot read without loading (an ingest journal at start):
            # indexed when first read, as its load publishes every item; never loaded for this.
            return True
        key = (log.workspace_id, log.session_id)
        mark = self.index.marks.get(key)
        if mark is None:
            return False
        epoch, marker = mark
        if log.totals is None and not log.has_items:
            # Kept with the mark: a session read before this start is not read again for them.
            # (Held items may be newer than the kept totals: such a log is read again instead.)
            log.totals = self.index.totals.pop(key, None)
        if log.totals is None:
            return False  # read whole again, for its totals (core/totals.py)
        if log.has_items or log.scan is None:  # `items` would make an empty log for each
            return epoch == log.epoch  # loaded: the tap adds what it publishes
        return marker >= log.last_activity  # not loaded: indexed as it stood then

    async def caught_up(self) -> None:
        """Wait until every live row published so far is written (the writer gathers live rows
        for a moment: a search must still find what the user just saw arrive)."""
        self._flush()
        live, _ = self.index.written()
        # Bounded: a writer held up (a full disk) delays the answer, never stops it.
        await asyncio.to_thread(self.index.wait_written, (live, 0), CAUGHT_UP_WAIT_S)

    async def ensure(self, log: SessionLog) -> None:
        """Index the session whole now if it is not (a search of one session waits for it),
        then wait until every row queued so far is written."""
        if not self.current(log):
            await self.fill(log)
        ticket = self.index.written()
        await asyncio.to_thread(self.index.wait_written, ticket)

    async def fill(self, log: SessionLog) -> None:
        key = (log.workspace_id, log.session_id)
        running = self._filling.get(key)
        if running is None:
            running = asyncio.ensure_future(self._fill(log))
            self._filling[key] = running
            running.add_done_callback(lambda _f: self._filling.pop(key, None))
        await asyncio.shield(running)

    async def _fill(self, log: SessionLog) -> None:
        marker = log.last_activity
        epochs: list[str] = []
        totals = SessionTotals()

        def sink(epoch: str, items: list[SessionItem]) -> None:  # a worker thread
            if self._stopped:
                raise Stopped
            last = 0
            for item in items:  # numbered as Store.append numbers them
                item.seq = item.seq if item.seq > last else last + 1
                last = item.seq
                redact_item_fields(item)
            totals.add_read(items)
            epochs.append(epoch)
            self.index.add(docs_of(log, epoch, items))

        try:
            scanned = log.scan is not None and await log.scan(sink)
        except Stopped:
            return
        if scanned:
            if epochs:
                # The scan held the session's lock: nothing was stored meanwhile.
                log.totals = totals
                self.index.mark(log.workspace_id, log.session_id, epochs[0], marker, totals)
            return
        await self._fill_loaded(log, marker)

    async def _fill_loaded(self, log: SessionLog, marker: float) -> None:
        """A loaded session: the items it holds, then its skipped part, a batch at a time."""
        await self.store.load(log)
        epoch, items = log.epoch, log.items
        totals = SessionTotals()
        held = len(items)
        for start in range(0, held, FILL_BATCH_ITEMS):
            stop = min(start + FILL_BATCH_ITEMS, held, len(items))  # fewer after a reset
            batch = [items[i] for i in range(start, stop)]
            totals.add_read(batch)
            await asyncio.to_thread(self.index.add, docs_of(log, epoch, batch))
        below = items.seq_at(0) if items else 1
        while log.earlier is not None and log.epoch == epoch:
            found, more = await log.earlier(below, 1000)
            totals.add_read(found)
            await asyncio.to_thread(self.index.add, docs_of(log, epoch, found))
            if not (more and found):
                break
            below = found[0].seq
        if log.epoch == epoch:
            # Items stored while this read ran (the tap indexed them): counted here, with no
            # wait between this and setting the totals, so none is missed or counted twice.
            totals.add_read([items[i] for i in range(held, len(items))])
            log.totals = totals
            self.index.mark(log.workspace_id, log.session_id, epoch, marker, totals)

    async def _backfill(self) -> None:
        await asyncio.sleep(BACKFILL_DELAY_S)
        while True:
            pending = [
                log
                for ws in list(self.store.workspaces.values())
                for log in list(ws.sessions.values())
                if not self.current(log)
            ]
            pending.sort(key=lambda log: log.last_activity, reverse=True)
            since_pause = time.monotonic()
            for log in pending:
                try:
                    await self.fill(log)
                except Exception:  # one unreadable session never stops the rest
                    logger.exception("search: could not index session %s", log.session_id)
                if time.monotonic() - since_pause >= PAUSE_EVERY_S:
                    await asyncio.sleep(PAUSE_S)
                    since_pause = time.monotonic()
                else:
                    await asyncio.sleep(0)  # the loop's other work between two sessions
            if pending:
                # Scanning holds its reads in the worker threads' arenas: give them back.
                await asyncio.to_thread(release_free_memory)
            self.ready.set()
            await asyncio.sleep(IDLE_RESCAN_S)
