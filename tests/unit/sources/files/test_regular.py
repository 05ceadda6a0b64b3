"""Only regular files are read: every reader of a source file refuses a FIFO, socket, device or
folder named like a transcript at once (never blocking on a FIFO), and sources count each once.

Calls that could block run in a daemon thread with a deadline, so a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store
from sidemirror.sources.claude.meta import agent_session_id, read_meta
from sidemirror.sources.claude.sync import find_sync_point, first_record_at_or_after
from sidemirror.sources.codex.head import read_head
from sidemirror.sources.files.regular import (
    NotRegularFile,
    SpecialFiles,
    open_regular,
    special_reason,
)
from sidemirror.sources.files.tailer import JsonlTailer

DEADLINE_S = 10.0  # generous for a loaded machine; a blocked open never returns at all


def returns(fn: Callable[[], Any]) -> Any:
    """fn() from a daemon thread; fails (instead of hanging) if it blocks."""
    out: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), "blocked"
    if errors:
        raise errors[0]
    return out[0]


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    paths = {
        "FIFO": tmp_path / "fifo.jsonl",
        "socket": tmp_path / "socket.jsonl",
        "directory": tmp_path / "folder.jsonl",
        "character device": tmp_path / "null.jsonl",
    }
    os.mkfifo(paths["FIFO"])
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(paths["socket"]))
    paths["directory"].mkdir()
    paths["character device"].symlink_to("/dev/null")  # followed, as opening follows it
    yield paths
    unix.close()


def test_open_regular_refuses_every_special_file_at_once(specials: dict[str, Path]) -> None:
    for kind, path in specials.items():
        with pytest.raises(OSError) as info:
            returns(lambda p=path: open_regular(p))
        if kind != "socket":  # opening a socket fails in the kernel (ENXIO) before any check
            assert isinstance(info.value, NotRegularFile)
            assert info.value.reason == f"not a regular file ({kind})"
        assert special_reason(path) == f"not a regular file ({kind})"


def test_open_regular_reads_a_regular_file_and_a_link_to_one(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    for p in (path, link):
        with open_regular(p) as fh:
            assert fh.read() == b'{"a": 1}\n'
        assert special_reason(p) is None
    assert special_reason(tmp_path / "gone.jsonl") is None  # missing is not special


def test_every_reader_of_source_files_skips_a_fifo(specials: dict[str, Path]) -> None:
    fifo = specials["FIFO"]
    assert returns(lambda: read_meta(fifo)) is None
    assert returns(lambda: agent_session_id(fifo)) is None
    assert returns(lambda: read_head(fifo)) is None
    assert returns(lambda: first_record_at_or_after(fifo, "2026")) == 0
    assert returns(lambda: find_sync_point(fifo, 1 << 30)) is None
    batch = returns(lambda: JsonlTailer(fifo).poll())
    assert batch.missing and batch.records == []


def test_a_transcript_replaced_by_a_fifo_reads_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    tailer = JsonlTailer(path)
    assert [v for _e, v in tailer.poll().records] == [{"a": 1}]
    path.unlink()
    os.mkfifo(path)
    assert returns(tailer.poll).missing


def test_special_files_are_counted_once_each_with_their_reason(
    specials: dict[str, Path], tmp_path: Path
) -> None:
    store = Store(Hub(), Projector())
    special = SpecialFiles(store)
    for _ in range(3):  # a FIFO's folder changes often: still one count each
        assert all(special.skip(p) for p in specials.values())
    assert store.parse_errors == 4
    details = list(store.parse_error_details)
    assert [(d["file"], d["offset"], d["reason"]) for d in details] == [
        (str(p), None, f"not a regular file ({kind})") for kind, p in specials.items()
    ]
    fifo = specials["FIFO"]
    fifo.unlink()
    special.forget(fifo)  # its deletion seen
    os.mkfifo(fifo)  # made again: counted again
    assert special.skip(fifo) and store.parse_errors == 5
    fifo.unlink()
    fifo.write_bytes(b"{}\n")  # now a regular file: read, not skipped
    assert not special.skip(fifo) and not special.skip(tmp_path / "gone.jsonl")
    assert store.parse_errors == 5
