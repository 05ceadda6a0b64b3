"""Codex rollouts compressed to `.jsonl.zst` (archived and older sessions), read like plain ones.

Codex moves finished rollouts to `archived_sessions/` and compresses old ones with zstd. A
compressed rollout is never appended to, so it is read whole, once, and read again only when
the file is replaced (another inode, size or mtime). It gives the same records, in the same
order, as its plain twin, so the parse and the item seqs (1, 2, 3… as for every rollout) are the
same: `offset` is a position in the decompressed text.

zstd: the standard library has it from Python 3.14 (`compression.zstd`); before that the
`zstandard` binding (the reference one, by the zstd authors' Python maintainer) reads it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import BinaryIO

from sidemirror.core.store import ParseProblem
from sidemirror.sources.files.regular import open_regular
from sidemirror.sources.files.tailer import MAX_LINE_BYTES, FileIdentity, TailBatch, decode_line

SUFFIX = ".jsonl.zst"
CHUNK_BYTES = 1 << 20
# A rollout is megabytes; a file that inflates past this is not one (or is a bomb): read no more.
MAX_DECOMPRESSED_BYTES = 1 << 30


def is_compressed(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


def _decompressing(raw: BinaryIO) -> BinaryIO:
    if sys.version_info >= (3, 14):
        from compression import zstd

        return zstd.ZstdFile(raw)
    import zstandard

    reader: BinaryIO = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
    return reader


def read_head(path: Path, limit: int) -> tuple[bytes, float]:
    """The first `limit` decompressed bytes and the file's mtime (for indexing)."""
    with open_regular(path) as raw:
        mtime = os.fstat(raw.fileno()).st_mtime
        with _decompressing(raw) as fh:
            data = b""
            while len(data) < limit:
                chunk = fh.read(limit - len(data))
                if not chunk:
                    break
                data += chunk
    return data, mtime


class CompressedRollout:
    """What CodexSession needs of a tailer (`poll`, `poll_async`, `identity`), for a `.zst`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity: FileIdentity | None = None
        self.offset = 0
        self._seen: tuple[int, int, int, int] | None = None  # dev, ino, size, mtime_ns

    async def poll_async(self) -> TailBatch:
        return await asyncio.to_thread(self.poll)

    def poll(self) -> TailBatch:
        try:
            st = os.stat(self.path)
        except OSError:
            return TailBatch(missing=True, offset=self.offset)
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key == self._seen:
            return TailBatch(offset=self.offset)
        if self._seen is not None:
            return TailBatch(reset=True, offset=self.offset)  # replaced: the owner starts over
        self._seen = key
        self.identity = (st.st_dev, st.st_ino)
        batch = TailBatch()
        try:
            self._read(batch)
        except Exception as exc:  # zstd or I/O: one bad archive is told about, never fatal
            reason = f"compressed rollout not readable: {type(exc).__name__}: {exc}"
            batch.problems.append(ParseProblem(str(self.path), None, reason))
        batch.offset = self.offset
        return batch

    def _read(self, batch: TailBatch) -> None:
        pending = b""
        total = 0
        with open_regular(self.path) as raw, _decompressing(raw) as fh:
            while True:
                chunk = fh.read(CHUNK_BYTES)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_DECOMPRESSED_BYTES:
                    reason = (
                        f"decompresses to over {MAX_DECOMPRESSED_BYTES >> 20} MiB: rest not read"
                    )
                    batch.problems.append(ParseProblem(str(self.path), self.offset, reason))
                    return
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._line(line, batch)
        if pending.strip():  # a compressed file is complete: its last line needs no newline
            self._line(pending, batch, newline=False)

    def _line(self, line: bytes, batch: TailBatch, *, newline: bool = True) -> None:
        start = self.offset
        self.offset += len(line) + (1 if newline else 0)
        if len(line) > MAX_LINE_BYTES:
            reason = f"line of {len(line)} bytes is over the {MAX_LINE_BYTES >> 20} MiB cap"
            batch.problems.append(ParseProblem(str(self.path), start, reason))
            return
        ok, value = decode_line(line)
        if not ok:
            # A last line with no newline that is not JSON: the archive was cut short.
            reason = "line is not JSON" if newline else "archive ends inside a line (cut short?)"
            batch.problems.append(ParseProblem(str(self.path), start, reason))
        elif value is not None and not isinstance(value, dict):
            batch.problems.append(ParseProblem(str(self.path), start, "line is not a JSON object"))
        elif value is not None:
            batch.records.append((self.offset, value))
