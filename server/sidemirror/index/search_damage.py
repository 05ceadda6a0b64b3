"""Telling a damaged search index from other failures, and FTS5's own integrity check.

`PRAGMA quick_check` at open reads every b-tree page, but FTS5 keeps its index as blobs in a
shadow table: bytes damaged inside a segment leave every page valid, and only a query that reads
that segment fails (SQLITE_CORRUPT, "database disk image is malformed"; a length field damaged
into a huge value makes SQLite report SQLITE_NOMEM, a MemoryError). FTS5's `integrity-check`
reads every segment and finds both.
"""

from __future__ import annotations

import logging
import sqlite3

logger = logging.getLogger(__name__)

TABLE = "search_text"


def is_damage(error: BaseException) -> bool:
    """Whether an error from reading or writing the index says the file is damaged.

    `OperationalError` is the file system (full, locked, read-only) or the query, never
    damage; any other `DatabaseError` (SQLITE_CORRUPT, SQLITE_NOTADB) is. A `MemoryError`
    from SQLite is taken for damage only once the integrity check confirms it (see callers).
    """
    return isinstance(error, sqlite3.DatabaseError) and not isinstance(
        error, sqlite3.OperationalError
    )


def integrity_ok(db: sqlite3.Connection) -> bool:
    """FTS5's own check of every segment (and of the index against its content table). It
    takes the write lock for its run: ~0.4 s for a 70 MB index. A check that cannot run now
    (a locked or full file) counts as sound: it is no sign of damage."""
    try:
        db.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES('integrity-check')")
    except sqlite3.OperationalError as error:
        logger.info("search index: integrity check not run (%s)", error)
        return True
    except (sqlite3.DatabaseError, MemoryError) as error:
        logger.warning("search index: integrity check failed (%s)", error or type(error).__name__)
        return False
    return True
