"""Full-text search over every session's items: SQLite FTS5 tables in the one index file.

Rows hold the redacted text of an item (what the store holds; never anything else) with where
it lives: workspace, session, the epoch its id was given under, its seq. One writer thread
applies batches from a bounded queue (whoever feeds it blocks when it is full: the backfill
slows down, memory does not grow), each batch one transaction, so a new line is searchable
within a batch of being published. Readers use their own connection (WAL: they never wait for
the writer).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sidemirror.index.database import open_index

SCHEMA = """
CREATE TABLE IF NOT EXISTS search_items(
    id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    session TEXT NOT NULL,
    epoch TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    ts TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE(workspace, session, seq)
);
CREATE INDEX IF NOT EXISTS search_items_ts ON search_items(ts);
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
    body, content='search_items', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS search_items_added AFTER INSERT ON search_items BEGIN
    INSERT INTO search_text(rowid, body) VALUES (new.id, new.body);
END;
CREATE TRIGGER IF NOT EXISTS search_items_removed AFTER DELETE ON search_items BEGIN
    INSERT INTO search_text(search_text, rowid, body) VALUES ('delete', old.id, old.body);
END;
CREATE TABLE IF NOT EXISTS search_sessions(
    workspace TEXT NOT NULL,
    session TEXT NOT NULL,
    epoch TEXT NOT NULL,
    marker REAL NOT NULL,
    PRIMARY KEY(workspace, session)
);
"""

QUEUE_BATCHES = 16  # backfill batches waiting for the writer at most (each ≤ ~1000 rows)
BATCH_OPS = 4  # backfill batches per transaction (live ones: all that wait)
WRITER_NICENESS = 10  # the writer thread runs below the event loop's priority
SNIPPET_TOKENS = 24


# What SQLite says of a MATCH expression it cannot parse (anything else is the server's fault).
_QUERY_ERRORS = ("fts5", "syntax error", "unterminated string", "no such column", "MATCH")


class BadQuery(ValueError):
    """The query is not valid FTS5 syntax (the message says where)."""


@dataclass(frozen=True)
class Doc:
    """One row: an item's searchable text (or, in a search's answer, the snippet of it)."""

    workspace: str
    session: str
    epoch: str
    seq: int
    type: str
    ts: str
    body: str


# What the writer does: add rows, drop a session's rows of other epochs, mark a session read.
_Op = tuple[str, tuple[object, ...]]


class SearchIndex:
    """The search tables, their one writer thread, and queries."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._cv = threading.Condition()
        self._live: deque[_Op] = deque()  # from the event loop: never waits, applied first
        self._backlog: deque[_Op] = deque()  # from the backfill: bounded, its feeder waits
        self._stopping = False
        self._queued = 0  # ops put so far
        self._applied = 0  # ops committed so far
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._lifecycle = threading.Lock()  # start and stop, one at a time
        # (workspace, session) -> (epoch, marker): sessions indexed whole (see `mark`).
        self.marks: dict[tuple[str, str], tuple[str, float]] = {}

    # --- lifecycle ---

    @property
    def ready(self) -> bool:
        """Open for reading (rows queued before are written once the writer starts)."""
        return self._reader is not None

    def start(self) -> None:
        """Open (or rebuild) the tables and start the writer. Blocking: call from a thread."""
        with self._lifecycle:
            self._start()

    def _start(self) -> None:
        writer = open_index(self.data_dir)
        writer.executescript(SCHEMA)
        self._reader = open_index(self.data_dir, check=False)  # the writer just checked it
        rows = writer.execute("SELECT workspace, session, epoch, marker FROM search_sessions")
        self.marks = {(w, s): (e, m) for w, s, e, m in rows}
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
        """Rows read by the backfill (a worker thread): waits while the backlog is full."""
        if docs:
            self._put(("add", tuple(docs)), live=False)

    def keep_epoch(self, workspace: str, session: str, epoch: str) -> None:
        """The session's log started over under `epoch`: rows of other epochs go."""
        self.marks.pop((workspace, session), None)
        self._put(("epoch", (workspace, session, epoch)), live=True)

    def mark(self, workspace: str, session: str, epoch: str, marker: float) -> None:
        """The session is indexed whole, under `epoch`, as it stood at `marker` (its last
        activity); after the rows put before it."""
        self.marks[(workspace, session)] = (epoch, marker)
        self._put(("mark", (workspace, session, epoch, marker)), live=False)

    def _put(self, op: _Op, *, live: bool) -> None:
        with self._cv:
            if live:
                self._live.append(op)
            else:
                self._cv.wait_for(lambda: len(self._backlog) < QUEUE_BATCHES or self._stopping)
                self._backlog.append(op)
            self._queued += 1
            self._cv.notify_all()

    def written(self) -> int:
        """A ticket: `wait_written(ticket)` returns once every op put before it is committed."""
        with self._cv:
            return self._queued

    def wait_written(self, ticket: int, timeout: float | None = None) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: self._applied >= ticket, timeout)

    def _write_loop(self, db: sqlite3.Connection) -> None:
        with contextlib.suppress(OSError, AttributeError):  # lower priority where the OS can
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICENESS)
        try:
            while True:
                with self._cv:
                    self._cv.wait_for(lambda: self._live or self._backlog or self._stopping)
                    if self._stopping and not self._live and not self._backlog:
                        return
                    ops = list(self._live)
                    self._live.clear()
                    for _ in range(min(len(self._backlog), BATCH_OPS)):
                        ops.append(self._backlog.popleft())
                    self._cv.notify_all()  # room in the backlog
                # The write lock up front: a deferred transaction's upgrade cannot wait for it.
                db.execute("BEGIN IMMEDIATE")
                for kind, args in ops:
                    _apply(db, kind, args)
                db.execute("COMMIT")
                with self._cv:
                    self._applied += len(ops)
                    self._cv.notify_all()
        finally:
            db.close()

    # --- reading ---

    def search(
        self,
        query: str,
        *,
        limit: int,
        workspace: str | None = None,
        session: str | None = None,
    ) -> list[Doc]:
        """Hits for an FTS5 query, newest first, each with its snippet as `body`. Blocking:
        call from a thread."""
        where = ["search_text MATCH ?"]
        params: list[object] = [query]
        if workspace is not None:
            where.append("i.workspace = ?")
            params.append(workspace)
        if session is not None:
            where.append("i.session = ?")
            params.append(session)
        sql = (
            "SELECT i.workspace, i.session, i.epoch, i.seq, i.type, i.ts, "
            f"snippet(search_text, 0, '', '', '…', {SNIPPET_TOKENS}) "
            "FROM search_text JOIN search_items i ON i.id = search_text.rowid "
            f"WHERE {' AND '.join(where)} ORDER BY i.ts DESC, i.seq DESC LIMIT ?"
        )
        params.append(limit)
        with self._read_lock:
            assert self._reader is not None, "the search index is not started"
            try:
                rows = self._reader.execute(sql, params).fetchall()
            except sqlite3.OperationalError as error:
                if any(part in str(error) for part in _QUERY_ERRORS):
                    raise BadQuery(str(error)) from None
                raise
        return [Doc(*row) for row in rows]

    def count(self) -> int:
        with self._read_lock:
            assert self._reader is not None
            (n,) = self._reader.execute("SELECT count(*) FROM search_items").fetchone()
        return int(n)


def _apply(db: sqlite3.Connection, kind: str, args: tuple[object, ...]) -> None:
    if kind == "add":
        db.executemany(
            "INSERT OR IGNORE INTO search_items(workspace, session, epoch, seq, type, ts, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            _rows(args),  # type: ignore[arg-type]
        )
    elif kind == "epoch":
        workspace, session, epoch = args
        db.execute(
            "DELETE FROM search_items WHERE workspace = ? AND session = ? AND epoch != ?",
            (workspace, session, epoch),
        )
        db.execute(
            "DELETE FROM search_sessions WHERE workspace = ? AND session = ?", (workspace, session)
        )
    elif kind == "mark":
        db.execute("INSERT OR REPLACE INTO search_sessions VALUES (?, ?, ?, ?)", args)


def _rows(docs: Iterable[Doc]) -> Iterable[tuple[str, str, str, int, str, str, str]]:
    for d in docs:
        yield d.workspace, d.session, d.epoch, d.seq, d.type, d.ts, d.body
