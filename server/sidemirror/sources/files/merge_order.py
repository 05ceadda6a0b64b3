"""The persisted merge order of a session whose log is built from several append-only files.

A Claude Code session is one transcript plus sub-agent files written concurrently. Each file is
append-only, but which file's new lines were read first when both grew is an accident of timing,
and item ids are positions in the merged log. So before publishing items we append one line here
per run of lines taken from one file — `[file key, end byte offset, inode]` — and a restart replays
exactly that order. A merge order that no longer matches its files is discarded and the log rebuilt
under a new epoch.

A live session appends a line per read batch, tens a second in a busy fleet: the lines go to
the file only (`entries` holds what was read or set before a `rewrite`; nothing reads the rest
back but a restart), through descriptors kept open in one LRU (`JOURNAL_FILES`, at most
`JOURNAL_OPEN_MAX`), not an open and close per batch. A line is in the file (the kernel's page
cache) once `append` returns, as before: a crash of the server after it loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sidemirror.core.durable import OpenFiles, WriteFailed, write_all
from sidemirror.core.private import private_dir, write_private

logger = logging.getLogger(__name__)
FORMAT = 1
JOURNAL_OPEN_MAX = 32
# Every session's journal descriptor, shared. First loads append from worker threads and live
# growth from the event loop, so each use holds the lock (a write is one short line).
JOURNAL_FILES = OpenFiles(JOURNAL_OPEN_MAX)
_JOURNAL_LOCK = threading.Lock()


@dataclass(frozen=True)
class Entry:
    key: str  # "" for the session's own file, else the sub-agent id
    end: int  # byte offset the file had been read to after this run
    inode: int


@dataclass
class MergeOrder:
    path: Path | None
    epoch: str
    entries: list[Entry] = field(default_factory=list)
    # Where the parse starts in each file: 0, except for a big transcript read from near its
    # end (claude/sync.py) and its sub-agent files placed against it; the items of the lines up
    # to the one ending at `keep_from` (the sync point's prompt) are the skipped part's.
    starts: dict[str, int] = field(default_factory=dict)
    keep_from: int = 0
    _broken: bool = False

    @classmethod
    def read(cls, path: Path | None) -> MergeOrder | None:
        """The merge order at `path`, or None when missing or unreadable (a rebuild follows)."""
        if path is None:
            return None
        try:
            lines = path.read_bytes().split(b"\n")
            header = json.loads(lines[0])
            if not isinstance(header, dict) or header.get("v") != FORMAT:
                return None
            starts = header.get("starts", {})
            order = cls(path, str(header["epoch"]))
            order.starts = {str(key): int(offset) for key, offset in starts.items()}
            order.keep_from = int(header.get("keep_from", 0))
            for raw in lines[1:]:
                if not raw.strip():
                    continue
                key, end, inode = json.loads(raw)
                order.entries.append(Entry(str(key), int(end), int(inode)))
            return order
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def rewrite(self) -> None:
        """Write the whole merge order (after a rebuild), atomically: a torn one is none."""
        if self.path is None:
            return
        header = {"v": FORMAT, "epoch": self.epoch}
        header |= {"starts": self.starts, "keep_from": self.keep_from} if self.starts else {}
        body = json.dumps(header) + "\n"
        body += "".join(_line(e) for e in self.entries)
        try:
            private_dir(self.path.parent)
            write_private(self.path, body)
        except OSError as exc:
            self._warn(exc)
        with _JOURNAL_LOCK:  # a descriptor still open is the replaced file's
            JOURNAL_FILES.forget(self.path)

    def append(self, entries: list[Entry]) -> None:
        """Add lines to the file (not to `entries`)."""
        if self.path is None or not entries or self._broken:
            return
        data = "".join(_line(e) for e in entries).encode()
        try:
            with _JOURNAL_LOCK:
                write_all(JOURNAL_FILES.fd(self.path)[0], data)
        except OSError as exc:
            self._warn(exc)
        except WriteFailed as failed:
            self._warn(failed.error)

    def _warn(self, exc: OSError) -> None:
        # Items still flow; only resuming this session across a restart is lost (new epoch then).
        if not self._broken:
            logger.warning("cannot write merge order %s: %s", self.path, exc)
        self._broken = True


def _line(entry: Entry) -> str:
    return json.dumps([entry.key, entry.end, entry.inode]) + "\n"


def new_epoch(main: Path) -> str:
    """Short ASCII, from the file's identity plus the time: never equal to an earlier epoch."""
    try:
        st = main.stat()
        ident = f"{st.st_dev}:{st.st_ino}"
    except OSError:
        ident = str(main)
    return hashlib.sha256(f"{ident}:{time.time_ns()}".encode()).hexdigest()[:8]
