"""Full-text search over every session's items: SQLite FTS5 tables in the one index file.

Rows hold the redacted text of an item (what the store holds; never anything else) with where
it lives: workspace, session, the epoch its id was given under, its seq (the tables and their
time-ordered ids: index/search_tables.py). One writer thread applies live rows (queued by the
event loop, never waiting; gathered there for a moment, index/search_feed.py) before backfill
chunks (a bounded queue: whoever feeds it blocks when it is full, so the backfill slows down and
memory does not grow). A backfill transaction ends as soon as live rows wait, so a live row is
written within one chunk's write of being queued. Readers use their own connection (WAL: they
never wait for the writer).

Self-healing: after opening, the writer runs FTS5's own integrity check before anything else.
A damaged index (that check failing, a search or a write meeting SQLITE_CORRUPT) is moved aside
and built afresh by the writer; meanwhile searches raise `IndexStarting` (503), rows queued
are kept for the new file, and the feed indexes every session again (index/search_damage.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from sidemirror.core.totals import SessionTotals, restored
from sidemirror.index import search_tables
from sidemirror.index.cpu_budget import CpuBudget
from sidemirror.index.database import index_path, move_aside, open_index
from sidemirror.index.search_damage import integrity_ok, is_damage
from sidemirror.index.search_reads import SearchReads
from sidemirror.index.search_tables import Doc

logger = logging.getLogger(__name__)

QUEUE_CHUNKS = 32  # backfill chunks waiting for the writer at most: its feeder then waits
CHUNK_ROWS = 100  # backfill rows per chunk: a live batch waits for one chunk's write at most
# Backfill rows per transaction: FTS5 writes a new segment at each commit, and merging many
# small ones costs more than the inserts; a live batch that arrives commits it early.
TRANSACTION_ROWS = 1000
CHECKPOINT_EVERY = 8  # transactions between two WAL checkpoints (never inside a commit)
BUILD_CORES = 0.8  # the whole server's CPU while the backfill runs, at most (live rows aside)
# Short waits for the next chunk (the parse is slower than the writer) stay in the CPU window.
IDLE_RESTART_S = 1.0
WRITER_CACHE_KIB = 4096
WRITER_NICE = 10  # the writer thread's nice, on Linux (`_lower_priority`)
RETRY_S = 1.0  # after a write the file system refused (a full disk): the rows wait, then again


# What the writer does: add rows, drop a session's rows of other epochs, mark a session read.
_Op = tuple[str, tuple[object, ...]]


def _rows_of(op: _Op) -> int:
    return len(op[1]) if op[0] == "add" else 0


class SearchIndex(SearchReads):
    """The search tables, their one writer thread, and queries (index/search_reads.py)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir
        self._cv = threading.Condition()
        self._live: deque[_Op] = deque()  # from the event loop: never waits, applied first
        self._backlog: deque[_Op] = deque()  # from the backfill: bounded, its feeder waits
        self._stopping = False
        # Ops put and committed so far, live and backlog: each queue is written in order.
        self._queued = [0, 0]
        self._applied = [0, 0]
        self._thread: threading.Thread | None = None
        self._lifecycle = threading.Lock()  # start and stop, one at a time
        # One budget for the build's two threads (the feeder's parse, the writer): a rest
        # one of them finds due holds both, or the other would go on spending the CPU.
        self._budget = CpuBudget(BUILD_CORES)
        self._rest_until = 0.0  # monotonic time until which the backfill rests
        # (workspace, session) -> (epoch, marker): sessions indexed whole (see `mark`).
        self.marks: dict[tuple[str, str], tuple[str, float]] = {}
        # (workspace, session) -> the totals kept with its mark, until the feed takes them.
        self.totals: dict[tuple[str, str], SessionTotals] = {}
        self.write_failures = 0  # transactions the file system refused (each written again)
        # Damage to deal with, for the writer: "check" (run the integrity check) or "rebuild".
        self._damage: str | None = None
        self.rebuilds = 0
        self.on_rebuilt: Callable[[], None] | None = None  # called from the writer thread

    # --- lifecycle ---

    @property
    def ready(self) -> bool:
        """Open for reading (rows queued before are written once the writer starts)."""
        return self._reader is not None and not self._rebuilding

    def start(self) -> None:
        """Open (or rebuild) the tables and start the writer. Blocking: call from a thread."""
        with self._lifecycle:
            self._start()

    def _start(self) -> None:
        writer = _open_writer(self.data_dir)
        try:  # a full disk fails it part way: nothing stays open, and a later start can succeed
            search_tables.create(writer)
            self._reader = open_index(self.data_dir, check=False)  # the writer just checked it
        except BaseException:
            writer.close()
            raise
        rows = writer.execute(
            "SELECT workspace, session, epoch, marker, totals FROM search_sessions"
        ).fetchall()
        self.marks = {(w, s): (e, m) for w, s, e, m, _ in rows}
        self.totals = {}
        for w, s, _, _, kept in rows:
            totals = restored(kept)
            if totals is not None:
                self.totals[(w, s)] = totals
        self._damage = "check"  # the writer's first job: quick_check cannot see inside FTS5
        self._thread = threading.Thread(
            target=self._write_loop, args=(writer,), name="search-index", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        with self._lifecycle:  # after a start still running in its thread
            self._stop()

    def _stop(self) -> None:
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # --- writing ---

    def add_live(self, docs: list[Doc]) -> None:
        """Rows of items just published (event loop): queued without waiting, written first."""
        if docs:
            self._put(("add", tuple(docs)), live=True)

    def add(self, docs: list[Doc]) -> None:
        """Rows read by the backfill (a worker thread): waits while the backlog is full, and
        rests while the server is over its CPU budget."""
        for start in range(0, len(docs), CHUNK_ROWS):
            self._pace(writer=False)
            self._put(("add", tuple(docs[start : start + CHUNK_ROWS])), live=False)

    def keep_epoch(self, workspace: str, session: str, epoch: str) -> None:
        """The session's log started over under `epoch`: rows of other epochs go."""
        self.marks.pop((workspace, session), None)
        self._put(("epoch", (workspace, session, epoch)), live=True)

    def mark(
        self,
        workspace: str,
        session: str,
        epoch: str,
        marker: float,
        totals: SessionTotals | None = None,
    ) -> None:
        """The session is indexed whole, under `epoch`, as it stood at `marker` (its last
        activity), with these totals then; after the rows put before it."""
        self.marks[(workspace, session)] = (epoch, marker)
        kept = None if totals is None else totals.saved()
        self._put(("mark", (workspace, session, epoch, marker, kept)), live=False)

    def _put(self, op: _Op, *, live: bool) -> None:
        with self._cv:
            if live:
                self._live.append(op)
            else:
                self._cv.wait_for(lambda: len(self._backlog) < QUEUE_CHUNKS or self._stopping)
                self._backlog.append(op)
            self._queued[0 if live else 1] += 1
            self._cv.notify_all()

    def written(self) -> tuple[int, int]:
        """A ticket: `wait_written(ticket)` returns once every op put before it is committed."""
        with self._cv:
            return self._queued[0], self._queued[1]

    def wait_written(self, ticket: tuple[int, int], timeout: float | None = None) -> bool:
        live, backlog = ticket
        with self._cv:
            return self._cv.wait_for(
                lambda: self._applied[0] >= live and self._applied[1] >= backlog, timeout
            )

    def _write_loop(self, db: sqlite3.Connection) -> None:
        _lower_priority()
        # SQLite checkpoints the WAL in whichever commit crosses its threshold, a live one too
        # (copying pages into the file, then an fsync): here, between transactions instead.
        db.execute("PRAGMA wal_autocheckpoint=0")
        since_checkpoint = 0
        try:
            while True:
                if self._damage is not None:
                    healed = self._heal(db)
                    if healed is None:
                        return  # stopping while the new file could not be made
                    db = healed
                    continue
                with self._cv:
                    if since_checkpoint >= CHECKPOINT_EVERY and not self._live:
                        since_checkpoint = 0
                        checkpoint = True
                    else:
                        checkpoint = False
                        idle = time.monotonic()
                        self._cv.wait_for(
                            lambda: self._live or self._backlog or self._stopping or self._damage
                        )
                        if time.monotonic() - idle > IDLE_RESTART_S:
                            self._budget.restart()  # a spell of idle is not headroom
                        if self._stopping and not self._live and not self._backlog:
                            return
                        if self._damage is not None:
                            continue
                    live = list(self._live)
                    self._live.clear()
                try:
                    if checkpoint:
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    elif live:
                        self._transaction(db, live)
                    else:
                        self._backfill_transaction(db)
                        self._pace(writer=True)
                except sqlite3.OperationalError as error:  # a full disk: nothing is lost
                    if not self._refused(db, error, live):
                        return  # stopping: the rows are lost, and so are their marks
                    continue
                except (sqlite3.DatabaseError, MemoryError) as error:  # damage met writing
                    self._put_back(db, live)
                    self.suspect(error)
                    continue
                since_checkpoint += not checkpoint
        finally:
            db.close()

    # --- damage ---

    def suspect(self, error: BaseException) -> None:
        """An error from the index: SQLITE_CORRUPT has the file rebuilt; anything else (SQLite's
        MemoryError from a damaged length) has the integrity check run first."""
        with self._cv:
            if is_damage(error):
                self._damage = "rebuild"
                self._rebuilding = True
            elif self._damage is None:
                self._damage = "check"
            self._cv.notify_all()

    def _heal(self, db: sqlite3.Connection) -> sqlite3.Connection | None:
        """The writer deals with damage reported: checks, then rebuilds if it is confirmed.
        None when the index stops before a new file could be made."""
        with self._cv:
            damage, self._damage = self._damage, None
        if damage == "check" and integrity_ok(db):
            return db
        return self._rebuild(db)

    def _rebuild(self, db: sqlite3.Connection) -> sqlite3.Connection | None:
        """The file moved aside (`*.corrupt`) and a new one opened; queued rows go into it. A
        new file the file system refuses (a full disk) is tried again every `RETRY_S`."""
        path = index_path(self.data_dir)
        logger.warning("search index %s is damaged: moved aside, building it again", path.name)
        with self._cv:
            self._rebuilding = True
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        db.close()
        while True:
            try:
                move_aside(path)
                db = _open_writer(self.data_dir)
                search_tables.create(db)
                db.execute("PRAGMA wal_autocheckpoint=0")
                reader = open_index(self.data_dir, check=False)
                break
            except (sqlite3.Error, OSError) as error:
                db.close()  # the new file's, if it opened (closing twice is harmless)
                logger.warning("search index: cannot make a new file (%s); trying again", error)
                with self._cv:
                    if self._cv.wait_for(lambda: self._stopping, RETRY_S):
                        return None
        self.marks = {}  # every session is indexed again
        self.totals = {}
        with self._read_lock:
            self._reader = reader
        with self._cv:
            self._rebuilding = False
        self.rebuilds += 1
        if self.on_rebuilt is not None:
            self.on_rebuilt()
        return db

    def _put_back(self, db: sqlite3.Connection, live: list[_Op]) -> None:
        """A failed transaction: rolled back, its live rows first in line again."""
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        with self._cv:
            self._live.extendleft(reversed(live))

    def _refused(self, db: sqlite3.Connection, error: sqlite3.Error, live: list[_Op]) -> bool:
        """A transaction the file system refused: rolled back, its live rows put back first
        (the backfill's are put back by `_backfill_transaction`), tried again after a rest.
        False when the index is stopping instead: nothing waits for the disk then."""
        self.write_failures += 1
        if self.write_failures == 1 or self.write_failures % 60 == 0:
            logger.warning(
                "search index: write refused (%s); trying again every %.0f s", error, RETRY_S
            )
        self._put_back(db, live)
        with self._cv:
            return not self._cv.wait_for(lambda: self._stopping, RETRY_S)

    def _pace(self, *, writer: bool) -> None:
        """Rests while the build is over its CPU budget (the writer: until live rows wait)."""
        with self._cv:
            rest = self._budget.rest()
            if rest > 0:
                self._rest_until = max(self._rest_until, time.monotonic() + rest)
            wait = self._rest_until - time.monotonic()
            if wait > 0:
                self._cv.wait_for(lambda: (writer and bool(self._live)) or self._stopping, wait)

    def _transaction(self, db: sqlite3.Connection, ops: list[_Op]) -> None:
        # The write lock up front: a deferred transaction's upgrade cannot wait for it.
        db.execute("BEGIN IMMEDIATE")
        for op in ops:
            _apply(db, op)
        db.execute("COMMIT")
        self._done(len(ops), live=True)

    def _backfill_transaction(self, db: sqlite3.Connection) -> None:
        """Backlog chunks, one at a time, up to `TRANSACTION_ROWS` rows or until live rows
        wait (they go next, in their own transaction)."""
        rows = 0
        taken: list[_Op] = []
        db.execute("BEGIN IMMEDIATE")
        try:
            while rows < TRANSACTION_ROWS:
                with self._cv:
                    if self._live or not self._backlog:
                        break
                    op = self._backlog.popleft()
                    self._cv.notify_all()  # room in the backlog
                taken.append(op)
                _apply(db, op)
                rows += _rows_of(op)
            db.execute("COMMIT")
        except (sqlite3.DatabaseError, MemoryError):
            with self._cv:  # written again, in order, once the file system takes them
                self._backlog.extendleft(reversed(taken))
            raise
        self._done(len(taken), live=False)

    def _done(self, ops: int, *, live: bool) -> None:
        with self._cv:
            self._applied[0 if live else 1] += ops
            self._cv.notify_all()


def _lower_priority() -> None:
    """The calling thread yields the CPU to the rest of the machine (Linux: a thread's own nice).

    A gather's write is ~0.1 s of one core every 2 s (FTS5 tokenizing, the interpreter lock let
    go). On a 2-core machine that left the event loop, and the browser showing what it sends,
    one core between them: the streams' events were 10-20 ms late at each write (the fleet
    bench). Nobody waits on the index meanwhile: a search first has it catch up."""
    if not sys.platform.startswith("linux"):
        return  # elsewhere PRIO_PROCESS takes a process id, not a thread's
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICE)


def _open_writer(data_dir: Path) -> sqlite3.Connection:
    """The writer's connection: a page cache of `WRITER_CACHE_KIB`, not the readers' 512 KiB.
    A fleet's live rows land all over the items' unique index and the FTS segments; with the
    small cache each transaction read back pages it had just written (~2,000 preads a second at
    400 lines/s) and the writer cost ~10 % more CPU (appending 12,000 rows to a 160 MB index)."""
    db = open_index(data_dir)
    db.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
    return db


def _apply(db: sqlite3.Connection, op: _Op) -> None:
    kind, args = op
    if kind == "add":
        rows: Sequence[Doc] = args  # type: ignore[assignment]
        search_tables.add(db, rows)
    elif kind == "epoch":
        search_tables.keep_epoch(db, *args)  # type: ignore[arg-type]
    elif kind == "mark":
        search_tables.mark(db, *args)  # type: ignore[arg-type]
