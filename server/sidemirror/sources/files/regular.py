"""Only regular files are read: a FIFO, socket, device or folder named like a transcript is not.

Opening a FIFO for reading blocks until some process opens it for writing, which may be never:
one FIFO named `*.jsonl` in a watched folder used to hold the startup scan (the port bound,
nothing answering), then the watcher (every session stopped updating), and the blocked thread
kept the process alive after SIGTERM. So every source file is opened non-blocking and checked
with `fstat` on the open descriptor before a byte is read (the path may have been swapped since
it was looked at), and sources check paths with `stat` — which never blocks — before they look
inside. What is skipped is counted once, with its reason (`/health` `parse_errors_detail`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from sidemirror.core.store import ParseProblem, Store

_KINDS = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISDIR, "directory"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def not_regular_reason(mode: int) -> str | None:
    """Why a file of this `st_mode` is not read; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    return f"not a regular file ({kind})"


class NotRegularFile(OSError):
    """Raised instead of opening (or reading) something other than a regular file. An OSError,
    so every reader that already treats an unreadable file as missing skips it the same way."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def open_regular_fd(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor opened without blocking (O_NONBLOCK makes opening a FIFO return at once; for
    a regular file it changes nothing), with its stat; anything but a regular file is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        reason = not_regular_reason(st.st_mode)
        if reason is not None:
            raise NotRegularFile(path, reason)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(path: Path) -> BinaryIO:
    """`open(path, "rb")` that never blocks, for regular files only (`open_regular_fd`)."""
    fd, _ = open_regular_fd(path)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_ends(path: Path, head: int, tail: int, whole: int) -> tuple[bytes, bytes, os.stat_result]:
    """A regular file's first `head` bytes and last `tail` bytes, or, when it is at most `whole`
    bytes long, all of it and b"", with its stat. Plain descriptor reads: startup reads both
    ends of every file of an archive, and a buffered file object per file cost more than the
    reads."""
    fd, st = open_regular_fd(path)
    try:
        if st.st_size <= whole:
            return os.pread(fd, whole, 0), b"", st
        return os.pread(fd, head, 0), os.pread(fd, tail, max(0, st.st_size - tail)), st
    finally:
        os.close(fd)


def special_reason(path: Path) -> str | None:
    """Why `path` will not be read when it is not a regular file; None when it is one, or is
    gone (a missing file is its reader's business, not a problem). `stat` follows symlinks, as
    opening does."""
    try:
        return not_regular_reason(os.stat(path).st_mode)
    except OSError:
        return None


class SpecialFiles:
    """Paths named like transcripts that are not regular files: each is counted once, however
    often it changes, until it is gone (`forget`) or becomes a regular file. Used on the event
    loop, where the store is written; scans in worker threads filter with `special_reason` and
    hand what they left out to `skip`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._seen: set[Path] = set()

    def skip(self, path: Path) -> bool:
        """True when `path` must not be read (counted the first time); False for a regular or
        missing file. Cheap enough for every change event: one `stat`."""
        reason = special_reason(path)
        if reason is None:
            self.forget(path)
            return False
        if path not in self._seen:
            self._seen.add(path)
            self.store.count_parse_error(problem=ParseProblem(str(path), None, reason))
        return True

    def forget(self, path: Path) -> None:
        """`path` was removed: whatever appears there next is looked at afresh."""
        self._seen.discard(path)
