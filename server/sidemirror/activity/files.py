"""The activity log on disk: `<root>/<ring key>.jsonl`, one append-only file per workspace ring,
and `meta.json` (the epoch and the seq high-water mark).

Appends go through `AppendFile` (core/durable.py): an entry is kept only if its line is whole,
and a failed write is cut back before anything else is appended. A ring's file is compacted
(rewritten as just the ring, synced, then renamed over the old one) when it reaches twice the
ring. At most a few files are open at a time, however many workspaces there are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidemirror.core.durable import (
    AppendFile,
    OpenFiles,
    StorageError,
    WriteFailed,
    read_whole_lines,
    write_all,
)
from sidemirror.core.private import private_dir, write_private

logger = logging.getLogger(__name__)
META_FILE = "meta.json"
FORMAT = 1


@dataclass
class RingFile:
    """What one ring's file held at start."""

    key: str
    records: list[dict[str, Any]] = field(default_factory=list)
    evicted: list[int] = field(default_factory=list)  # seqs a compaction recorded as gone


class ActivityFiles:
    def __init__(self, root: Path, files: OpenFiles | None = None) -> None:
        self.root = root
        self.files = files or OpenFiles()
        self._appenders: dict[str, AppendFile] = {}
        self._ends: dict[str, int] = {}  # bytes of whole lines in each file read at start
        self._lines: dict[str, int] = {}  # lines in each ring's file (compaction is due at 2x)
        self._unsynced: set[str] = set()

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.jsonl"

    def _appender(self, key: str) -> AppendFile:
        appender = self._appenders.get(key)
        if appender is None:
            end = self._ends.pop(key, None)
            appender = self._appenders[key] = AppendFile(self.files, self._path(key), end)
        return appender

    def lines(self, key: str) -> int:
        return self._lines.get(key, 0)

    # --- reading (at start) ---

    def read_meta(self) -> dict[str, Any]:
        try:
            meta = json.loads((self.root / META_FILE).read_text())
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    def read_all(self, pause: Callable[[], None] = lambda: None) -> list[RingFile]:
        """Every ring file's valid records; torn last lines are cut. `pause` runs after each."""
        if not self.root.is_dir():
            return []
        out: list[RingFile] = []
        for entry in os.scandir(self.root):  # paths as strings: 10,000 files must read fast
            if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                ring = self._read(entry.path, entry.name[: -len(".jsonl")])
                if ring is not None:
                    out.append(ring)
                pause()
        return out

    def _read(self, path: str, key: str) -> RingFile | None:
        try:
            data = read_whole_lines(path)
        except OSError as exc:
            logger.warning("cannot read activity log %s: %s", path, exc)
            return None
        ring = RingFile(key)
        raw_lines = data.split(b"\n")[:-1]
        for raw in raw_lines:
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("seq"), int):
                ring.records.append(record)
            elif isinstance(record, dict) and isinstance(record.get("evicted"), list):
                ring.evicted = [s for s in record["evicted"] if isinstance(s, int)]
        self._lines[key] = len(raw_lines)
        self._ends[key] = len(data)
        return ring

    # --- writing ---

    def write_meta(self, epoch: str, seq: int) -> None:
        """Replace meta.json (atomically). Raises OSError."""
        private_dir(self.root)
        meta = {"format": FORMAT, "epoch": epoch, "seq": seq}
        write_private(self.root / META_FILE, json.dumps(meta))

    def append(self, key: str, line: bytes) -> None:
        """Append one whole line to the ring's file, or raise StorageError with nothing kept."""
        appender = self._appender(key)
        try:
            appender.append(line)
        except WriteFailed as exc:
            if appender.end is not None:  # where the line began (None: nothing was opened)
                appender.cut(appender.end)
            raise StorageError(self.root, exc.error) from None
        self._lines[key] = self.lines(key) + 1
        self._unsynced.add(key)

    def compact(self, key: str, lines: list[bytes]) -> None:
        """Replace the ring's file by `lines`, whole and synced before the rename (so a crash
        leaves the old file or the new one). Raises StorageError, leaving the old file."""
        path = self._path(key)
        tmp = path.with_suffix(".tmp")
        data = b"".join(lines)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except (OSError, WriteFailed) as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            error = exc.error if isinstance(exc, WriteFailed) else exc
            raise StorageError(self.root, error) from None
        old = self._appenders.pop(key, None)
        if old is not None:
            old.close()
        self._ends[key] = len(data)
        # The rename is durable once the directory is synced too.
        self._appender(key).created_in(self.root)
        self._lines[key] = len(lines)
        self._unsynced.add(key)

    async def sync(self) -> None:
        """fsync every ring file appended to since the last sync. Raises OSError."""
        keys, self._unsynced = self._unsynced, set()
        results = await asyncio.gather(
            *(self._appenders[k].sync() for k in keys if k in self._appenders),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, OSError)]
        if errors:
            # Fresh appenders: the failed ones refuse every later sync (see AppendFile.sync).
            for key in keys:
                old = self._appenders.pop(key, None)
                if old is not None:
                    old.close()
            raise errors[0]
        for r in results:
            if isinstance(r, BaseException):
                raise r

    def close(self) -> None:
        self.files.close()
