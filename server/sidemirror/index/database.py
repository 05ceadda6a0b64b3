"""Open the index database: one SQLite file, WAL mode, rebuilt when missing or corrupt.

Damage `PRAGMA quick_check` cannot see (bytes inside an FTS5 segment, a valid b-tree page) is
found by FTS5's own integrity check, which the search index runs in the background after it
opens, and by a search that reads it; the search index then moves the file aside and builds it
again (index/search_damage.py).

The index only ever holds what can be derived again from the agent files and the journals, so
a damaged file is moved aside and started afresh rather than repaired: losing it costs a
background re-index, never data. A file the disk cannot write to (full, failing) is not damaged:
it is kept, and the open fails with the disk's error (`disk_refused` tells it apart).
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from pathlib import Path

from sidemirror.core.private import private_dir

logger = logging.getLogger(__name__)

INDEX_FILE = "index.sqlite3"
# Bump when a table changes shape: an index of another version is rebuilt, not migrated.
SCHEMA_VERSION = 1
CACHE_KIB = 512  # page cache per connection (see _open_checked)
# SQLite's primary result codes for a write the file system refused (sqlite3.h), as errnos.
_DISK_REFUSED = {10: errno.EIO, 13: errno.ENOSPC}  # SQLITE_IOERR, SQLITE_FULL


def disk_refused(error: sqlite3.Error) -> int | None:
    """The errno of a SQLite error that means the disk refused a write (full, failing), or
    None for any other error (a damaged file among them)."""
    return _DISK_REFUSED.get(getattr(error, "sqlite_errorcode", 0) & 0xFF)


def index_path(data_dir: Path) -> Path:
    return data_dir / INDEX_FILE


def open_index(data_dir: Path, *, check: bool = True) -> sqlite3.Connection:
    """A connection to the index; a file that is not an index of this version is replaced.

    `check` also reads every page (`PRAGMA quick_check`, replacing a damaged file): a second
    or more on a big search index, so it is for the search index's own open, in the
    background. The file index opens without it, on the listing's path; a damaged page it
    meets is an error that turns it off for the run (index/files.py).
    `check_same_thread=False` because the index is filled from a worker thread while the event
    loop reads it; callers serialise their own use of one connection (or open one each).
    """
    private_dir(data_dir)  # 0700 whatever the umask (a source's state folder opens one too)
    path = index_path(data_dir)
    try:
        return _open_checked(path, check)
    except sqlite3.DatabaseError as error:
        if disk_refused(error) is not None:
            raise  # a full disk: the file is fine, and a rebuild would need room too
        logger.warning("index %s unreadable (%s); rebuilding it", path.name, error)
        move_aside(path)
        return _open_checked(path, check)


def _open_checked(path: Path, check: bool) -> sqlite3.Connection:
    # Session text (titles, search snippets): only this OS user may read it. SQLite gives its
    # -wal and -shm files the database file's mode, so creating that one private is enough.
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    # Two writers share the file (file index, search feed): wait for the lock, up to 10 s.
    connection = sqlite3.connect(path, timeout=10.0, check_same_thread=False, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        # The index can always be rebuilt; durability of its last transaction is not worth
        # an fsync per commit.
        connection.execute("PRAGMA synchronous=NORMAL")
        # A connection's page cache stays in the server's memory for as long as it is open:
        # 512 KiB, not SQLite's 2 MiB, costs a search ~0.5 ms (the OS caches the file anyway)
        # and builds the index as fast (10,000 sessions listed: RSS once idle 83 → 80 MB).
        connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        if check:
            (result,) = connection.execute("PRAGMA quick_check").fetchone()
            if result != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {result}")
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version not in (0, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except sqlite3.DatabaseError:
        connection.close()
        raise
    return connection


def move_aside(path: Path) -> None:
    """The file and its -wal and -shm become `*.corrupt` (one kept, for a look afterwards)."""
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.replace(part.with_name(part.name + ".corrupt"))
