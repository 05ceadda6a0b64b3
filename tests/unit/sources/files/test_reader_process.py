"""The second interpreter that reads a cold start's files (sources/files/reader_process.py): a
real child process, real transcripts. It gives exactly the rows a read here gives, says which
files it cannot hand over, and a child that cannot start or dies hands its batch back."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from sidemirror.sources.claude.meta import meta_row, read_meta
from sidemirror.sources.files.reader_process import NOT_KEPT, NOTHING, ReaderProcess

from tests.harness.paths import FIXTURES

TRANSCRIPTS = sorted((FIXTURES / "claude").rglob("*.jsonl"))


def size_or_nothing(path: Path) -> int | None:
    """A read for the tests: the file's size; nothing for an empty file."""
    size = path.stat().st_size
    return size or None


def kept_if_even(size: int) -> int | None:
    """An encoding for the tests: odd sizes are not kept."""
    return size if size % 2 == 0 else None


async def test_it_gives_the_rows_a_read_here_gives() -> None:
    reader = ReaderProcess(read_meta, meta_row)
    assert await reader.start()
    try:
        answers = await reader.read(TRANSCRIPTS)
        again = await reader.read(TRANSCRIPTS[:2])  # batch after batch on the same process
    finally:
        await reader.finish()
    expected = []
    for path in TRANSCRIPTS:
        meta = read_meta(path)
        expected.append(NOTHING if meta is None else [meta_row(meta)])
    assert answers == expected
    assert again == expected[:2]
    assert any(isinstance(a, list) and a[0]["title"] for a in expected)  # real titles came over


async def test_it_says_which_reads_it_cannot_hand_over(tmp_path: Path) -> None:
    files = []
    for name, data in (("empty", b""), ("odd", b"abc"), ("even", b"abcd")):
        (tmp_path / name).write_bytes(data)
        files.append(tmp_path / name)
    reader = ReaderProcess(size_or_nothing, kept_if_even)
    assert await reader.start()
    try:
        assert await reader.read(files) == [NOTHING, NOT_KEPT, [4]]
    finally:
        await reader.finish()


async def test_a_reader_that_cannot_start_fails_cleanly() -> None:
    reader = ReaderProcess(read_meta, meta_row)
    reader._names = ("sidemirror.no_such_module:read", "sidemirror.no_such_module:encode")
    assert await reader.start() is False
    assert reader.failed
    assert await reader.read(TRANSCRIPTS[:1]) is None  # the caller reads them itself


async def test_a_reader_that_dies_hands_its_batch_back() -> None:
    reader = ReaderProcess(read_meta, meta_row)
    assert await reader.start()
    process = reader._process
    assert process is not None
    process.kill()
    await process.wait()
    assert await reader.read(TRANSCRIPTS[:3]) is None
    assert reader.failed


async def test_closing_mid_batch_stops_the_process() -> None:
    reader = ReaderProcess(read_meta, meta_row)
    assert await reader.start()
    process = reader._process
    assert process is not None
    # Far more than it reads before the close below: it is stopped, not left to finish.
    batch = asyncio.ensure_future(reader.read(TRANSCRIPTS * 5000))
    while not reader._busy:
        await asyncio.sleep(0)
    reader.close()
    assert await process.wait() == -signal.SIGKILL
    assert await batch is None


async def test_a_file_name_that_is_not_utf8_reaches_the_same_file(tmp_path: Path) -> None:
    data = next((FIXTURES / "claude" / "sample-project").glob("*.jsonl")).read_bytes()
    name = os.fsdecode(b"session-\xff.jsonl")  # a surrogate escape in the path's str
    transcript = tmp_path / name
    transcript.write_bytes(data)
    meta = read_meta(transcript)
    assert meta is not None
    reader = ReaderProcess(read_meta, meta_row)
    assert await reader.start()
    try:
        assert await reader.read([transcript]) == [[meta_row(meta)]]
    finally:
        await reader.finish()
