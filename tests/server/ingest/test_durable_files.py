"""core/durable.py: whole writes, cut-back of failed ones, bounded open files."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.durable import AppendFile, OpenFiles, WriteFailed, read_whole_lines


def _short_then_full(monkeypatch: pytest.MonkeyPatch, allow: int) -> None:
    """os.write takes `allow` bytes in all, then the disk is full."""
    real = os.write
    left = [allow]

    def write(fd: int, data: Any) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real(fd, bytes(data)[: min(left[0], 3)])  # short writes of at most 3 bytes
        left[0] -= n
        return n

    monkeypatch.setattr(os, "write", write)


def _kept_line(tmp_path: Path) -> tuple[Path, AppendFile]:
    """A log holding one whole line, "kept", before the write under test."""
    path = tmp_path / "log.jsonl"
    f = AppendFile(OpenFiles(), path)
    f.append(b"kept\n")
    return path, f


def test_short_writes_are_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = AppendFile(OpenFiles(), tmp_path / "log.jsonl")
    _short_then_full(monkeypatch, 1000)
    f.append(b"one line\n")
    assert (tmp_path / "log.jsonl").read_bytes() == b"one line\n" and f.end == 9


def test_a_failed_write_says_how_much_reached_the_file_and_is_cut_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, f = _kept_line(tmp_path)
    _short_then_full(monkeypatch, 7)
    with pytest.raises(WriteFailed) as failed:
        f.append(b"first\nsecond\n")
    assert failed.value.written == 7 and failed.value.error.errno == errno.ENOSPC
    assert path.read_bytes() == b"kept\nfirst\ns"
    f.cut(f.end + 6)  # keep the whole line, drop the fragment
    assert path.read_bytes() == b"kept\nfirst\n"


def test_nothing_is_appended_onto_a_fragment_a_failed_cut_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, f = _kept_line(tmp_path)
    with path.open("ab") as fh:
        fh.write(b'{"torn')  # what a failed write whose cut failed too leaves behind
    f.append(b"next\n")
    assert path.read_bytes() == b"kept\nnext\n"


def test_open_files_are_bounded_and_idle_ones_closed(tmp_path: Path) -> None:
    files = OpenFiles(capacity=3, idle_s=60)
    appenders = [AppendFile(files, tmp_path / f"{n}.jsonl") for n in range(10)]
    for f in appenders:
        f.append(b"x\n")
    assert len(files) == 3
    for f in appenders:  # evicted files reopen where they were
        f.append(b"y\n")
    assert all((tmp_path / f"{n}.jsonl").read_bytes() == b"x\ny\n" for n in range(10))
    files.idle_s = 0
    appenders[0].append(b"z\n")
    assert len(files) == 1
    files.close()
    assert len(files) == 0


def test_a_torn_last_line_is_cut_on_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    assert read_whole_lines(path) == b'{"a":1}\n'
    assert path.read_bytes() == b'{"a":1}\n'


async def test_a_failed_fsync_is_reported_then_and_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = AppendFile(OpenFiles(), tmp_path / "log.jsonl")
    f.append(b"x\n")

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError):
        await f.sync()
    monkeypatch.undo()
    f.append(b"y\n")
    with pytest.raises(OSError):  # data the failed fsync covered may be gone: never "synced"
        await f.sync()
