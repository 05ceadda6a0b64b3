"""Queries of the search index: hits newest first with their snippets, and how many match.

The reading side of index/search.py's `SearchIndex`: one connection of its own (WAL: it never
waits for the writer), used by one query at a time. A query that meets a damaged segment has the
index check itself (`suspect`) and answers `IndexStarting` (the routes' 503), never a raw SQLite
error; a query FTS5 cannot parse is `BadQuery` (400).
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from sidemirror.index.search_matches import CLOSE, OPEN
from sidemirror.index.search_tables import Doc

SNIPPET_TOKENS = 24
TOTAL_CAP = 10_000  # matches counted at most: a word in every item is not counted to the end

# What SQLite says of a MATCH expression it cannot parse (anything else is the server's fault).
_QUERY_ERRORS = (
    "fts5",
    "syntax error",
    "unterminated string",
    "no such column",
    "MATCH",
    "special query",
)


class BadQuery(ValueError):
    """The query is not valid FTS5 syntax (the message says where)."""


class IndexStarting(RuntimeError):
    """The index is not open for reading: opening, or being rebuilt after damage."""


class SearchReads:
    """The reader connection and the queries on it."""

    def __init__(self) -> None:
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._rebuilding = False  # queries answer IndexStarting until the new file is open

    def suspect(self, error: BaseException) -> None:
        """A query met `error`: the index is checked, and rebuilt if damaged (SearchIndex)."""
        raise NotImplementedError

    def search(self, query: str, **where: Any) -> list[Doc]:
        """Hits for an FTS5 query, newest first: `find` without the total."""
        return self.find(query, **where)[0]

    def find(
        self,
        query: str,
        *,
        limit: int,
        workspace: str | None = None,
        session: str | None = None,
    ) -> tuple[list[Doc], int]:
        """Hits for an FTS5 query, newest first, each with its snippet as `body` (the matched
        tokens between `OPEN` and `CLOSE`), and how many items match (up to `TOTAL_CAP`).
        Blocking: call from a thread. Raises BadQuery, or IndexStarting while the index is not
        open."""
        where = ["search_text MATCH ?"]
        params: list[object] = [query]
        if workspace is not None:
            where.append("i.workspace = ?")
            params.append(workspace)
        if session is not None:
            where.append("i.session = ?")
            params.append(session)
            # Only the span of time the session's rows cover: FTS5 seeks to it, where the
            # matches of a common word in every other session would be read to find its own.
            where.append("search_text.rowid BETWEEN ? AND ?")
        source = (
            "FROM search_text JOIN search_items i ON i.id = search_text.rowid "
            f"WHERE {' AND '.join(where)}"
        )
        sql = (
            "SELECT i.workspace, i.session, i.epoch, i.seq, i.type, i.ts, "
            f"snippet(search_text, 0, char({ord(OPEN)}), char({ord(CLOSE)}), '…', "
            f"{SNIPPET_TOKENS}) {source} "
            # Newest first is rowid order (search_tables.py): FTS5 reads it backwards and
            # stops at the limit, with no sort of every match.
            "ORDER BY search_text.rowid DESC LIMIT ?"
        )
        count = f"SELECT count(*) FROM (SELECT 1 {source} LIMIT {TOTAL_CAP})"
        with self._read_lock:
            if self._reader is None or self._rebuilding:
                raise IndexStarting
            try:
                if session is not None:
                    assert workspace is not None, "a session is named within its workspace"
                    params += self._reader.execute(
                        "SELECT min(id), max(id) FROM search_items "
                        "WHERE workspace = ? AND session = ?",
                        (workspace, session),
                    ).fetchone()
                (total,) = self._reader.execute(count, params).fetchone()
                rows = self._reader.execute(sql, [*params, limit]).fetchall()
            except sqlite3.OperationalError as error:
                if any(part in str(error) for part in _QUERY_ERRORS):
                    raise BadQuery(str(error)) from None
                raise
            except (sqlite3.DatabaseError, MemoryError) as error:  # a damaged segment
                self.suspect(error)
                raise IndexStarting from error
        return [Doc(*row) for row in rows], int(total)

    def count(self) -> int:
        with self._read_lock:
            if self._reader is None or self._rebuilding:
                raise IndexStarting
            (n,) = self._reader.execute("SELECT count(*) FROM search_items").fetchone()
        return int(n)
