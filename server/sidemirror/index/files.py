"""Per-file metadata that a source read from an agent file, kept across restarts.

A heavy user's archive holds thousands of transcripts that never change again; reading each
one's head and tail on every start cost seconds. Each source keeps here what its listing needs
of a file (cwd, title, branch, times: a small JSON object, already redacted), keyed by the
file's path and valid while its size and modification time are those recorded: a restart reads
only the files that changed. Rows of files that are gone are dropped after each full listing.
Rows are keyed by a hash of the path, not the path: a project folder's name is its cwd, which
can hold a secret.

The table lives in the one index file (`database.py`); a file that cannot be opened is moved
aside and rebuilt there, and any later SQLite error turns this index off for the rest of the
run (the sources then read every file, as without an index): it is a cache, never a source of
truth.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from sidemirror.index.database import open_index

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS file_meta (
    source TEXT NOT NULL,      -- which source wrote the row ("claude", "codex", ...)
    path BLOB NOT NULL,        -- sha256 of the file's path, 16 bytes (a path can hold a secret)
    size INTEGER NOT NULL,     -- st_size when read
    mtime_ns INTEGER NOT NULL, -- st_mtime_ns when read
    meta TEXT NOT NULL,        -- what the source read, as JSON (redacted)
    PRIMARY KEY (source, path)
) WITHOUT ROWID
"""

# Two sources open the file at about the same time: one repairs a corrupt file, not both.
_OPENING = threading.Lock()


@dataclass(frozen=True, slots=True)
class FileStat:
    """What says a file is unchanged since it was read."""

    size: int
    mtime_ns: int


def _key(path: Path) -> bytes:
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).digest()[:16]


def _loads(text: str) -> Any | None:
    # pydantic-core's parser: a third of json.loads's time on these small rows, and a restart
    # decodes ten thousand of them. A row it refuses is read again from its file.
    try:
        return from_json(text)
    except ValueError:
        return None


class FileIndex:
    """One source's rows. Used from one worker thread at a time (the source's indexing)."""

    def __init__(self, data_dir: Path | None, source: str) -> None:
        self.source = source
        self._connection: sqlite3.Connection | None = None
        # Whether the source has any row at all: a first start has none to look up.
        self.has_rows = False
        if data_dir is None:
            return
        try:
            with _OPENING:
                self._connection = open_index(data_dir, check=False)
                self._connection.execute(SCHEMA)
            self.has_rows = (
                self._connection.execute(
                    "SELECT 1 FROM file_meta WHERE source = ? LIMIT 1", (source,)
                ).fetchone()
                is not None
            )
        except (sqlite3.Error, OSError) as error:
            logger.warning("file index unavailable (%s); reading every file", error)
            self._connection = None

    @property
    def enabled(self) -> bool:
        return self._connection is not None

    def get_many(self, listed: Sequence[tuple[Path, FileStat]]) -> list[Any | None]:
        """What was recorded for each file, where it is still the one it was read from (one
        query per call: a batch's rows, never the whole table, are in memory at once)."""
        if self._connection is None or not self.has_rows or not listed:
            return [None] * len(listed)
        keys = [_key(path) for path, _ in listed]
        marks = ",".join("?" * len(keys))
        try:
            rows = self._connection.execute(
                f"SELECT path, size, mtime_ns, meta FROM file_meta "
                f"WHERE source = ? AND path IN ({marks})",
                (self.source, *keys),
            ).fetchall()
        except sqlite3.Error as error:
            self._failed(error)
            return [None] * len(listed)
        found = {row[0]: row for row in rows}
        out: list[Any | None] = []
        for key, (_, stat) in zip(keys, listed, strict=True):
            row = found.get(key)
            if row is None or row[1] != stat.size or row[2] != stat.mtime_ns:
                out.append(None)
            else:
                out.append(_loads(row[3]))
        return out

    def put(self, found: Sequence[tuple[Path, FileStat, Any]]) -> None:
        """Record what was read of these files (one transaction)."""
        if self._connection is None or not found:
            return
        rows = [
            (self.source, _key(p), s.size, s.mtime_ns, json.dumps(meta, ensure_ascii=False))
            for p, s, meta in found
        ]
        try:
            with self._connection:
                self._connection.execute("BEGIN IMMEDIATE")
                self._connection.executemany(
                    "INSERT OR REPLACE INTO file_meta VALUES (?, ?, ?, ?, ?)", rows
                )
        except sqlite3.Error as error:
            self._failed(error)

    def keep_only(self, present: Iterable[Path]) -> int:
        """Drop the rows of files no longer on disk; how many were dropped."""
        if self._connection is None:
            return 0
        keep = {_key(p) for p in present}
        try:
            rows = self._connection.execute(
                "SELECT path FROM file_meta WHERE source = ?", (self.source,)
            )
            gone = [(self.source, key) for (key,) in rows if key not in keep]
            if gone:
                with self._connection:
                    self._connection.execute("BEGIN IMMEDIATE")
                    self._connection.executemany(
                        "DELETE FROM file_meta WHERE source = ? AND path = ?", gone
                    )
        except sqlite3.Error as error:
            self._failed(error)
            return 0
        return len(gone)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _failed(self, error: sqlite3.Error) -> None:
        logger.warning("file index error (%s); reading every file from now on", error)
        self.close()
