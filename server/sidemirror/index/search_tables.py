"""The search tables in the index file, and the writes to them (index/search.py's writer).

A row's id is its time key: the item's time in milliseconds, shifted left by `TIE_BITS`, plus
a tie counter. FTS5 walks a word's matches in rowid order, so "newest first" is reading that
order backwards and stopping at the limit: a word in every item of the archive costs as
little as a rare one, where sorting every match by time cost a scan of them all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

# The search tables' own version (the file index keeps its tables): tables of another version
# are dropped and filled again, the rest of the file untouched.
SEARCH_VERSION = 3  # 3: `search_sessions.totals`

TIE_BITS = 20  # rows sharing one millisecond, at most (~1 M): ids stay within 62 bits
_MAX_MS = (1 << 42) - 1  # the year 2109; later times sort as that

# Rows of one INSERT statement. One shape only (the rest of a batch goes a row at a time): a
# prepared statement keeps what was last bound to it, and the connection keeps a statement per
# SQL text, so statements of every size up to 120 rows held ~7 MB of rows' text for good.
INSERT_ROWS = 16
_COLUMNS = "id, workspace, session, epoch, seq, type, ts, body"
_Keyed = tuple[int, str, str, str, int, str, str, str]  # a row's values, in `_COLUMNS` order
_INSERT_ONE = f"INSERT OR IGNORE INTO search_items({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_INSERT_MANY = _INSERT_ONE + ", (?, ?, ?, ?, ?, ?, ?, ?)" * (INSERT_ROWS - 1)

SCHEMA = """
CREATE TABLE IF NOT EXISTS search_version(version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS search_items(
    id INTEGER PRIMARY KEY,  -- the time key (see the module's docstring)
    workspace TEXT NOT NULL,
    session TEXT NOT NULL,
    epoch TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    ts TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE(workspace, session, seq)
);
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
    totals TEXT,  -- the session's totals as read then (core/totals.py), as JSON
    PRIMARY KEY(workspace, session)
);
"""

# Everything the search keeps (version 1 had an index on ts; its other tables keep their names).
_DROP = """
DROP TABLE IF EXISTS search_text;
DROP TRIGGER IF EXISTS search_items_added;
DROP TRIGGER IF EXISTS search_items_removed;
DROP INDEX IF EXISTS search_items_ts;
DROP TABLE IF EXISTS search_items;
DROP TABLE IF EXISTS search_sessions;
DROP TABLE IF EXISTS search_version;
"""


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


def create(db: sqlite3.Connection) -> None:
    """The tables, of this version: tables of another one (or none) are made afresh."""
    names = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    version = None
    if "search_version" in names:
        row = db.execute("SELECT version FROM search_version").fetchone()
        version = row[0] if row else None
    if version == SEARCH_VERSION:
        return
    # One script, one transaction (executescript commits whatever was open before it).
    db.executescript(
        "BEGIN IMMEDIATE;"
        + _DROP
        + SCHEMA
        + f"INSERT INTO search_version VALUES ({SEARCH_VERSION}); COMMIT;"
    )


def time_ms(ts: str) -> int:
    """An item's ISO 8601 time in ms since the epoch (0 when it has none or is unreadable:
    such items sort as the oldest)."""
    try:
        when = datetime.fromisoformat(ts)
    except ValueError:
        return 0
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(max(int(when.timestamp() * 1000), 0), _MAX_MS)


def add(db: sqlite3.Connection, rows: Sequence[Doc]) -> None:
    """Rows not held yet (one per workspace, session and seq), each under a free time key.

    The rows are bound to statements of `INSERT_ROWS` (the last few one at a time): the
    interpreter is let go once per statement. A row at a time it was taken back twice per row,
    each time waiting out the switch interval while a parse held it (~5 ms): a batch took
    seconds. Passed as one JSON array instead, SQLite parsed every row again (~25 µs a row of
    1.4 KB, a third of the insert)."""
    bases = [time_ms(r.ts) << TIE_BITS for r in rows]
    (found,) = db.execute(
        "SELECT json_group_object(value, (SELECT max(id) FROM search_items "
        "WHERE id BETWEEN value AND value + ?)) FROM json_each(?)",
        ((1 << TIE_BITS) - 1, json.dumps(sorted(set(bases)))),
    ).fetchone()
    last = {
        int(base): (int(base) - 1 if top is None else top)
        for base, top in json.loads(found).items()
    }
    keyed: list[_Keyed] = []
    for base, r in zip(bases, rows, strict=True):
        key = last[base] + 1
        if key >= base + (1 << TIE_BITS):
            continue  # a million items in one millisecond: the rest are not searchable
        last[base] = key
        keyed.append((key, r.workspace, r.session, r.epoch, r.seq, r.type, r.ts, r.body))
    # Written in key order: FTS5 starts a new segment each time a row's id is not above the
    # last one written in the transaction. A fleet's live rows come in the order they were
    # read, not by time (followed files at once, the rest a round later): in a live-like order
    # every fourth row started a segment, and merging them cost 115 µs a row against 71 sorted.
    keyed.sort(key=lambda row: row[0])
    whole = len(keyed) - len(keyed) % INSERT_ROWS
    for start in range(0, whole, INSERT_ROWS):
        db.execute(
            _INSERT_MANY, [value for row in keyed[start : start + INSERT_ROWS] for value in row]
        )
    if whole < len(keyed):
        db.executemany(_INSERT_ONE, keyed[whole:])


def keep_epoch(db: sqlite3.Connection, workspace: str, session: str, epoch: str) -> None:
    """The session's rows of other epochs go, and its mark (it is indexed again)."""
    db.execute(
        "DELETE FROM search_items WHERE workspace = ? AND session = ? AND epoch != ?",
        (workspace, session, epoch),
    )
    db.execute(
        "DELETE FROM search_sessions WHERE workspace = ? AND session = ?", (workspace, session)
    )


def mark(
    db: sqlite3.Connection,
    workspace: str,
    session: str,
    epoch: str,
    marker: float,
    totals: str | None,
) -> None:
    db.execute(
        "INSERT OR REPLACE INTO search_sessions VALUES (?, ?, ?, ?, ?)",
        (workspace, session, epoch, marker, totals),
    )
