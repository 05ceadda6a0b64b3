"""Byte-offset tailing of append-only JSONL files (format-agnostic: Claude, Codex rollouts).

A tailer remembers how far it has read one file and, on each `poll()`, returns the JSON values of
the complete lines appended since. Rules learned from real agent logs:

- A writer may be caught mid-line: a line is taken only once its newline is there, so a value is
  never parsed twice or half. A partial line is not held between polls: it is read again (a small
  one) or, when long, only searched for its newline from where the last search stopped.
- Logs are append-only until they are not: a file whose inode changed (replaced) or whose size fell
  below what was read (truncated) makes the tailer start over from byte 0 and report `reset`, so
  the owner can rebuild its log under a new epoch.
- One huge line must not cost unbounded memory, nor be lost: a line longer than `max_line_bytes`
  is found first, then read in pieces through `LongLine`, which keeps its shape and the head of
  its long strings (long_line.py). Its record comes out cut, and the line is reported.
- A line that cannot be read is reported with its byte offset and why (`TailBatch.problems`), and
  the lines after it are read. Nothing here raises on bad input or a vanished file.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidemirror.core.jsonline import decode_line as decode_line  # re-exported for the sources
from sidemirror.core.store import ParseProblem
from sidemirror.sources.files.long_line import LongLine
from sidemirror.sources.files.regular import open_regular, open_regular_fd

MAX_LINE_BYTES = 8 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
LONG_LINE_PIECE_BYTES = 256 * 1024  # how much of a capped line is held at once

FileIdentity = tuple[int, int]

# Reads up to this size are done on the event loop (see JsonlTailer.poll_async).
INLINE_READ_BYTES = 256 * 1024


@dataclass
class TailBatch:
    """What one poll found: decoded values with the byte offset just past each one's line."""

    records: list[tuple[int, Any]] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)  # lines not read (or cut), why
    reset: bool = False
    missing: bool = False
    offset: int = 0

    @property
    def errors(self) -> int:
        return len(self.problems)


def file_identity(st: os.stat_result) -> FileIdentity:
    return (st.st_dev, st.st_ino)


class JsonlTailer:
    """Follows one file; `offset` is the end of the last complete line consumed."""

    def __init__(
        self,
        path: Path,
        *,
        offset: int = 0,
        identity: FileIdentity | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        on_reset: Callable[[Path], None] | None = None,
        objects_only: bool = False,
        cancel: threading.Event | None = None,
    ) -> None:
        self.path = path
        self.offset = offset
        self.identity = identity
        self.max_line_bytes = max_line_bytes
        self.on_reset = on_reset
        # Agent logs are JSON objects per line: anything else is a problem with a place.
        self.objects_only = objects_only
        # Set when the owner stops: a read in a worker thread ends at its next chunk (what was
        # not consumed is read again by the next start), so no thread holds the process's exit.
        self.cancel = cancel
        # How far the line at `offset` is known to have no newline (a partial line's end).
        self._searched = offset

    async def poll_async(self) -> TailBatch:
        """`poll()` from the event loop: a small append (the live case) is read inline, since a
        thread hop costs more than the read; a large backlog is read in a worker thread."""
        try:
            backlog = os.stat(self.path).st_size - self.offset
        except OSError:
            backlog = 0  # gone: poll() itself reports what happened
        if 0 <= backlog <= INLINE_READ_BYTES:
            return self.poll()
        return await asyncio.to_thread(self.poll)

    def poll(self, limit: int | None = None) -> TailBatch:
        """Read what was appended (up to byte `limit` if given: journal replay stops at a mark)."""
        batch = TailBatch(offset=self.offset)
        batch.records = list(self.stream(batch, limit))
        return batch

    def stream(
        self, batch: TailBatch, limit: int | None = None, chunk_bytes: int = CHUNK_BYTES
    ) -> Iterator[tuple[int, Any]]:
        """`poll()` as a generator, for reads of any size: values are decoded as they are taken
        and only one chunk of raw bytes is held, so a first load of a huge transcript never holds
        all its records. `batch` gets the problems and flags (`offset` once the stream is done);
        its `records` stay empty. The end is fixed when the file is opened, as `poll()` does:
        lines appended meanwhile are left for the next read."""
        fd = None
        try:
            # Never blocks (a FIFO put in the file's place): not a regular file reads as missing.
            # A bare descriptor: a file object per live change cost three more syscalls.
            fd, st = open_regular_fd(self.path)
            ident = file_identity(st)
            if self.identity is None:
                self.identity = ident
            elif ident != self.identity or st.st_size < self._searched:
                self._restart(ident)
                batch.reset = True
                if self.on_reset is not None:
                    self.on_reset(self.path)
            end = st.st_size if limit is None else min(st.st_size, limit)
            while self.offset < end and not self._cancelled():
                start = self.offset
                if self._searched > start:  # a line known to be long, or still partial
                    line_end = self._newline(fd, self._searched, end, chunk_bytes)
                    if line_end is None:
                        break
                    yield from self._long_line(fd, start, line_end, batch)
                    continue
                chunk = os.pread(fd, min(chunk_bytes, end - start), start)
                if not chunk:
                    break
                last = start + len(chunk) >= end
                if last and chunk.endswith(b"\n"):
                    os.close(fd)  # a merge of many files keeps open only those not yet read
                    fd = None
                complete = chunk.rfind(b"\n") + 1
                # A chunk with no newline is one line longer than a chunk (or a partial line):
                # the next round searches on from the chunk's end, without holding it.
                self._searched = start + len(chunk) if complete == 0 else start
                yield from self._lines(chunk, complete, start, batch)
                if fd is None:
                    break
        except OSError:
            batch.missing = True
        finally:
            if fd is not None:
                os.close(fd)
            batch.offset = self.offset

    def _restart(self, ident: FileIdentity) -> None:
        self.identity = ident
        self.offset = 0
        self._searched = 0

    def _lines(
        self, data: bytes, complete: int, base: int, batch: TailBatch
    ) -> Iterator[tuple[int, Any]]:
        """The lines in `data[:complete]` (read from file offset `base`; ends with a newline)."""
        pos = 0
        while pos < complete:
            nl = data.index(b"\n", pos)
            line = data[pos:nl]
            if len(line) > self.max_line_bytes:  # in memory already (chunks can be large)
                capped = LongLine(base + pos)
                capped.feed(line)
                value = self._capped(capped, batch)
            else:
                value = self._decode(line, base + pos, batch)
            # The offset moves before the value is handed over, as it did when a poll returned
            # a list: a consumer that stops early has still consumed this line.
            self._consumed(base + nl + 1)
            pos = nl + 1
            if value is not None:
                yield self.offset, value

    def _newline(self, fd: int, start: int, end: int, chunk_bytes: int) -> int | None:
        """The offset of the next newline in [start, end), reading and dropping chunks; None
        (and the search remembered) when the line goes on past `end`."""
        pos = start
        while pos < end and not self._cancelled():
            chunk = os.pread(fd, min(chunk_bytes, end - pos), pos)
            if not chunk:
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                return pos + nl
            pos += len(chunk)
        self._searched = pos
        return None

    def _long_line(
        self, fd: int, start: int, newline: int, batch: TailBatch
    ) -> Iterator[tuple[int, Any]]:
        """The line [start, newline): whole if it is within the cap, else in pieces, cut."""
        if newline - start <= self.max_line_bytes:
            value = self._decode(os.pread(fd, newline - start, start), start, batch)
        else:
            capped = LongLine(start)
            for pos in range(start, newline, LONG_LINE_PIECE_BYTES):
                if self._cancelled():
                    return  # not consumed: read whole by the next start
                capped.feed(os.pread(fd, min(LONG_LINE_PIECE_BYTES, newline - pos), pos))
            value = self._capped(capped, batch)
        self._consumed(newline + 1)
        if value is not None:
            yield self.offset, value

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _consumed(self, line_end: int) -> None:
        self.offset = line_end
        self._searched = max(self._searched, line_end)

    def _decode(self, line: bytes, offset: int, batch: TailBatch) -> Any:
        ok, value = decode_line(line)
        if not ok:
            self._problem(batch, offset, "line is not JSON")
            return None
        if value is not None and self.objects_only and not isinstance(value, dict):
            self._problem(batch, offset, "line is not a JSON object")
            return None
        return value

    def _capped(self, line: LongLine, batch: TailBatch) -> Any:
        value, reason = line.finish()
        self._problem(batch, line.offset, reason)  # cut or lost, the user is told where
        if self.objects_only and not isinstance(value, dict):
            return None
        return value

    def _problem(self, batch: TailBatch, offset: int, reason: str) -> None:
        batch.problems.append(ParseProblem(str(self.path), offset, reason))


def read_edge_records(path: Path, *, from_end: bool, max_bytes: int = 65536) -> list[Any]:
    """Decoded complete lines from the first (or last) `max_bytes` of a file, for cheap indexing.

    Reading only the edges keeps startup fast on large archives; a cut line at the window's edge
    is dropped rather than guessed at.
    """
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            start = max(0, size - max_bytes) if from_end else 0
            fh.seek(start)
            data = fh.read(max_bytes)
    except OSError:
        return []
    lines = data.split(b"\n")
    if from_end and start > 0:
        lines = lines[1:]
    if not data.endswith(b"\n"):
        lines = lines[:-1]  # the last line is partial (still being written, or cut by the window)
    values = []
    for line in lines:
        ok, value = decode_line(line)
        if ok and value is not None:
            values.append(value)
    return values
