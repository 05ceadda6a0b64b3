"""Byte-offset tailing of append-only JSONL files (format-agnostic: Claude, Codex rollouts).

A tailer remembers how far it has read one file and, on each `poll()`, returns the JSON values of
the complete lines appended since. Rules learned from real agent logs:

- A writer may be caught mid-line: the partial last line stays buffered until its newline arrives,
  so a value is never parsed twice or half.
- Logs are append-only until they are not: a file whose inode changed (replaced) or whose size fell
  below what was read (truncated) makes the tailer start over from byte 0 and report `reset`, so
  the owner can rebuild its log under a new epoch.
- One hostile line must not cost unbounded memory: a line longer than `max_line_bytes` is skipped
  while it streams past (never held whole) and counted as an error, as are undecodable lines.
- Nothing here raises on bad input or a vanished file; callers get counts, not exceptions.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidemirror.core.jsonline import decode_line as decode_line  # re-exported for the sources
from sidemirror.sources.files.regular import open_regular

MAX_LINE_BYTES = 8 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024

FileIdentity = tuple[int, int]

# Reads up to this size are done on the event loop (see JsonlTailer.poll_async).
INLINE_READ_BYTES = 256 * 1024


@dataclass
class TailBatch:
    """What one poll found: decoded values with the byte offset just past each one's line."""

    records: list[tuple[int, Any]] = field(default_factory=list)
    errors: int = 0
    reset: bool = False
    missing: bool = False
    offset: int = 0


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
    ) -> None:
        self.path = path
        self.offset = offset
        self.identity = identity
        self.max_line_bytes = max_line_bytes
        self.on_reset = on_reset
        self._read_pos = offset  # bytes read so far, including a buffered partial line
        self._partial = bytearray()
        self._skipping = False  # inside an oversized line, dropping bytes until its newline

    async def poll_async(self) -> TailBatch:
        """`poll()` from the event loop: a small append (the live case) is read inline, since a
        thread hop costs more than the read; a large backlog is read in a worker thread."""
        try:
            backlog = os.stat(self.path).st_size - self._read_pos
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
        all its records. `batch` gets the counts and flags (`offset` once the stream is done);
        its `records` stay empty. The end is fixed when the file is opened, as `poll()` does:
        lines appended meanwhile are left for the next read."""
        fh = None
        try:
            # Never blocks (a FIFO put in the file's place): not a regular file reads as missing.
            fh = open_regular(self.path)  # closed early, once its last chunk is in
            st = os.fstat(fh.fileno())
            ident = file_identity(st)
            if self.identity is None:
                self.identity = ident
            elif ident != self.identity or st.st_size < self._read_pos:
                self._restart(ident)
                batch.reset = True
                if self.on_reset is not None:
                    self.on_reset(self.path)
            end = st.st_size if limit is None else min(st.st_size, limit)
            fh.seek(self._read_pos)
            while self._read_pos < end:
                chunk = fh.read(min(chunk_bytes, end - self._read_pos))
                if not chunk:
                    break
                if self._read_pos + len(chunk) >= end:
                    fh.close()  # a merge of many files keeps open only those not yet read
                yield from self._consume(chunk, batch)
        except OSError:
            batch.missing = True
        finally:
            if fh is not None:
                fh.close()
            batch.offset = self.offset

    def _restart(self, ident: FileIdentity) -> None:
        self.identity = ident
        self.offset = 0
        self._read_pos = 0
        self._partial.clear()
        self._skipping = False

    def _consume(self, chunk: bytes, batch: TailBatch) -> Iterator[tuple[int, Any]]:
        start = 0
        base = self._read_pos  # file offset of chunk[0]
        self._read_pos += len(chunk)
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                self._buffer(chunk[start:], batch)
                return
            line_end = base + nl + 1
            value = None
            if self._skipping:
                self._skipping = False
                batch.errors += 1
            elif len(self._partial) + (nl - start) > self.max_line_bytes:
                self._partial.clear()
                batch.errors += 1
            else:
                if self._partial:
                    self._partial += chunk[start:nl]
                    line = bytes(self._partial)
                    self._partial.clear()
                else:
                    line = chunk[start:nl]
                ok, value = decode_line(line)
                if not ok:
                    batch.errors += 1
            # The offset moves before the value is handed over, as it did when a poll returned
            # a list: a consumer that stops early has still consumed this line.
            self.offset = line_end
            start = nl + 1
            if value is not None:
                yield line_end, value

    def _buffer(self, tail: bytes, batch: TailBatch) -> None:
        if self._skipping or not tail:
            return
        if len(self._partial) + len(tail) > self.max_line_bytes:
            # Too long to ever be accepted: stop holding it and drop bytes until its newline.
            self._partial.clear()
            self._skipping = True
            return
        self._partial += tail


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
