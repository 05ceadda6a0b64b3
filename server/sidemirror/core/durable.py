"""Append-only line files that acknowledge only what is whole on disk (the ingest journal, the
activity log).

- `AppendFile.append` writes all of its bytes (a short write is continued) or raises
  `WriteFailed` saying how many reached the file; the caller keeps the lines that are whole and
  `cut`s the rest. Each append first checks the file's size against what was kept and cuts any
  excess (a cut that failed), so nothing is ever appended onto a fragment.
- `AppendFile.sync` is the fsync, run in a worker thread so the event loop never waits on the
  disk; callers sync once per request (not per line) before they acknowledge it.
- `OpenFiles` keeps at most a few files open (least recently used closed first, idle ones
  closed), so a log with 10,000 files never runs out of descriptors. The item logs' spill files
  share one too (`core/item_log.py`), opened read-write.
- `read_whole_lines` reads a file for replay and cuts a torn last line (a crash mid-write).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import time
from collections import OrderedDict
from pathlib import Path

from sidemirror.core.private import open_private

# Write errors that mean "the disk cannot take it" (full, over quota, failing), answered 507.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS})
DISK_FULL = "disk_full"  # the error code of every 507 answer


class WriteFailed(Exception):
    """A write stopped part way: `written` bytes of it reached the file."""

    def __init__(self, written: int, error: OSError) -> None:
        super().__init__(str(error))
        self.written = written
        self.error = error


class StorageError(Exception):
    """Data could not be stored under the data dir; the message names the directory."""

    def __init__(self, where: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        super().__init__(f"cannot store data in {where}: {reason}")
        self.where = where
        self.error = error

    def body(self, first_unstored_line: int | None = None) -> dict[str, dict[str, object]]:
        """The JSON error of a 507 answer; a line-based write says where the client resumes
        (the 0-based index of the first line not stored) inside the error too."""
        error: dict[str, object] = {"code": DISK_FULL, "message": str(self)}
        if first_unstored_line is not None:
            error["first_unstored_line"] = first_unstored_line
        return {"error": error}


def pwrite_all(fd: int, data: bytes, offset: int) -> None:
    """Write every byte of `data` at `offset` (a short pwrite, as a nearly full file system
    gives, is continued) or raise `WriteFailed` saying how many reached the file."""
    view = memoryview(data)
    done = 0
    while done < len(data):
        try:
            n = os.pwrite(fd, view[done:], offset + done)
        except OSError as exc:
            raise WriteFailed(done, exc) from exc
        if n == 0:
            raise WriteFailed(done, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        done += n


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` (continuing short writes) or raise `WriteFailed`."""
    view = memoryview(data)
    done = 0
    while done < len(data):
        try:
            n = os.write(fd, view[done:])
        except OSError as exc:
            raise WriteFailed(done, exc) from exc
        if n == 0:
            raise WriteFailed(done, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        done += n


class OpenFiles:
    """Descriptors of append-only files, opened on use: at most `capacity` open (the least
    recently used is closed first) and any unused for `idle_s` closed at the next use.
    `flags` is how each is opened (appending by default; the spill files: read-write)."""

    def __init__(
        self, capacity: int = 64, idle_s: float = 60.0, flags: int = os.O_WRONLY | os.O_APPEND
    ) -> None:
        self.capacity = capacity
        self.idle_s = idle_s
        self.flags = flags
        self._open: OrderedDict[Path, tuple[int, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def fd(self, path: Path) -> tuple[int, bool]:
        """An open descriptor for `path` (appending, by default), and whether the file was just
        created."""
        now = time.monotonic()
        entry = self._open.pop(path, None)
        self._close_spare(now)  # before `path` goes back in: it is in use
        created = False
        if entry is None:
            # Session text: 0600 whatever the umask, and a file from an older version is set
            # to 0600 when it is next opened.
            try:
                fd = open_private(path, self.flags | os.O_EXCL)
                created = True
            except FileExistsError:
                fd = open_private(path, self.flags)
        else:
            fd = entry[0]
        self._open[path] = (fd, now)
        return fd, created

    def forget(self, path: Path) -> None:
        """Close `path` if it is open (it was replaced or removed)."""
        entry = self._open.pop(path, None)
        if entry is not None:
            os.close(entry[0])

    def close(self) -> None:
        while self._open:
            os.close(self._open.popitem(last=False)[1][0])

    def _close_spare(self, now: float) -> None:
        """Make room for one more, and close the files unused for `idle_s`."""
        while len(self._open) >= self.capacity:
            os.close(self._open.popitem(last=False)[1][0])
        while self._open:
            path, (fd, used) = next(iter(self._open.items()))
            if now - used < self.idle_s:
                break
            del self._open[path]
            os.close(fd)


def _fsync(path: Path, dirs: tuple[Path, ...]) -> None:
    # A descriptor of our own: the cache may close its one while this thread runs. Linux reports
    # a writeback error to the first fsync after it, whichever descriptor it comes through.
    for target, flags in ((path, os.O_RDONLY), *((d, os.O_RDONLY | os.O_DIRECTORY) for d in dirs)):
        fd = os.open(target, flags)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_dirs(directory: Path) -> tuple[Path, ...]:
    """Create `directory` and any missing parents; returns the directories whose entries changed
    (each new directory's parent), which an fsync must cover for the new files to survive."""
    missing: list[Path] = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for new in reversed(missing):
        new.mkdir(mode=0o700, exist_ok=True)
    return tuple(new.parent for new in missing)


class AppendFile:
    """One append-only file: where its kept bytes end, and whether they are synced."""

    def __init__(self, files: OpenFiles, path: Path, end: int | None = None) -> None:
        self.files = files
        self.path = path
        self.end = end  # bytes kept; None until the file is first opened
        self._unsynced = False
        self._new_dirs: tuple[Path, ...] = ()  # directories whose new entries need an fsync
        self._sync_lock = asyncio.Lock()
        self._sync_failed: OSError | None = None

    def append(self, data: bytes) -> None:
        """Write `data` after the kept bytes; on `WriteFailed` the caller cuts what it keeps."""
        try:
            self._new_dirs += _make_dirs(self.path.parent)
            fd, created = self.files.fd(self.path)
            size = os.fstat(fd).st_size
            if created:
                self._new_dirs += (self.path.parent,)
            if self.end is None or size < self.end:
                self.end = size
            elif size > self.end:  # a failed write whose cut failed too: never append after it
                os.ftruncate(fd, self.end)
        except OSError as exc:
            raise WriteFailed(0, exc) from exc
        self._unsynced = True
        write_all(fd, data)
        self.end += len(data)

    def created_in(self, directory: Path) -> None:
        """`directory` got a new entry for this file (a rename): the next sync covers it."""
        self._new_dirs += (directory,)
        self._unsynced = True

    def cut(self, end: int) -> None:
        """Keep only the first `end` bytes (drop a write not kept). If that fails, the next
        append cuts first, so nothing is ever appended after a fragment."""
        self.end = end
        with contextlib.suppress(OSError):
            os.ftruncate(self.files.fd(self.path)[0], end)

    async def sync(self) -> None:
        """fsync what was appended (off the event loop); raises OSError if it failed, then and
        at every later call, since data it covered may be gone."""
        async with self._sync_lock:
            if self._sync_failed is not None:
                raise self._sync_failed
            if not self._unsynced:
                return
            self._unsynced = False
            dirs, self._new_dirs = self._new_dirs, ()
            try:
                await asyncio.to_thread(_fsync, self.path, dirs)
            except OSError as exc:
                self._sync_failed = exc
                raise

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.files.forget(self.path)


def open_regular(path: str | Path) -> int:
    """A read-only descriptor of `path` if it is a regular file. Never blocks: a FIFO named like
    a log would otherwise hold the reader until someone writes to it. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"not a regular file: {path}")
    return fd


def read_whole_lines(path: str | Path) -> bytes:
    """The file up to its last newline, and a torn last line (crash mid-write) cut off the file
    (if that fails, `AppendFile` cuts it before its first append: give it this length as `end`).
    Raises OSError if the file cannot be read."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        chunks = []
        while size > 0 and (chunk := os.read(fd, size)):
            chunks.append(chunk)
            size -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    cut = data.rfind(b"\n") + 1
    if cut < len(data):
        with contextlib.suppress(OSError):
            os.truncate(path, cut)
    return data[:cut]
