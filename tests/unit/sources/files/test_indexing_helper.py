"""A cold start's reads shared with a second interpreter (sources/files/indexing.py, `_Helper`):
the listing, and the rows the file index keeps, are exactly those of reads done here alone, and
a helper that dies mid-run loses no file."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sidemirror.index.files import FileIndex
from sidemirror.sources.claude.meta import Meta, meta_from_row, meta_row, read_meta
from sidemirror.sources.files import indexing
from sidemirror.sources.files.indexing import (
    IndexProgress,
    Listed,
    Remembered,
    newest_first,
    read_in_batches,
)
from sidemirror.sources.files.reader_process import ReaderProcess

from tests.harness.paths import FIXTURES

SOURCE = "claude-test"
COPIES = 40  # of each real transcript: a few chunks' worth


def archive(root: Path) -> list[Listed]:
    transcripts = sorted((FIXTURES / "claude").rglob("*.jsonl"))
    paths = []
    for n in range(COPIES):
        folder = root / f"project-{n:02d}"
        folder.mkdir(parents=True)
        for i, transcript in enumerate(transcripts):
            copy = folder / f"{n:02d}-{i:02d}-{transcript.name}"
            shutil.copyfile(transcript, copy)
            os.utime(copy, ns=(10**18 + n * 1000 + i, 10**18 + n * 1000 + i))
            paths.append(copy)
    listed, special = newest_first(paths)
    assert not special
    return listed


async def index(listed: list[Listed], data_dir: Path) -> tuple[list[Meta | None], IndexProgress]:
    progress = IndexProgress(total=len(listed))
    kept = Remembered(data_dir, SOURCE, meta_row, meta_from_row)
    values: list[Meta | None] = []
    async for batch in read_in_batches(listed, read_meta, progress, "test-index", kept):
        values += [meta for _, meta in batch]
    return values, progress


def rows(listed: list[Listed], data_dir: Path) -> list[Any]:
    stored = FileIndex(data_dir, SOURCE)
    try:
        return stored.get_many(listed)
    finally:
        stored.close()


@pytest.fixture
def helper_from_the_first_chunk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The helper used from the chunk after it is started (on a fast machine the threads would
    otherwise read a small archive before it is up); returns the sizes of its batches."""
    monkeypatch.setattr(indexing, "HELPER_FROM", 1)
    monkeypatch.setattr(indexing, "CHUNK", 64)
    batches: list[int] = []
    real_read = indexing._Helper.read

    async def read_once_started(self: Any, paths: list[Path]) -> list[Any] | None:
        await self._started
        batches.append(len(paths))
        return await real_read(self, paths)

    monkeypatch.setattr(indexing._Helper, "ready", property(lambda self: bool(self._started)))
    monkeypatch.setattr(indexing._Helper, "read", read_once_started)
    return batches


async def test_the_helper_gives_the_listing_and_rows_of_reads_done_here(
    tmp_path: Path, helper_from_the_first_chunk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = archive(tmp_path / "claude")
    with_helper, progress = await index(listed, tmp_path / "with")
    assert sum(helper_from_the_first_chunk) > len(listed) // 2  # it read most of them
    monkeypatch.setattr(indexing, "HELPER_FROM", 10**9)
    alone, _ = await index(listed, tmp_path / "alone")
    assert with_helper == alone
    assert sum(meta is not None for meta in alone) > len(listed) // 2
    assert progress.done == progress.read == len(listed)
    assert rows(listed, tmp_path / "with") == rows(listed, tmp_path / "alone")
    # A restart takes everything from the index the helper filled.
    again, progress = await index(listed, tmp_path / "with")
    assert again == alone and progress.read == 0


async def test_a_helper_that_dies_loses_no_file(
    tmp_path: Path, helper_from_the_first_chunk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = archive(tmp_path / "claude")
    real_read: Callable[..., Awaitable[list[Any] | None]] = ReaderProcess.read
    calls = 0

    async def dies_on_the_second_batch(self: ReaderProcess, paths: list[Path]) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2 and self._process is not None:
            self._process.kill()
            await self._process.wait()
        return await real_read(self, paths)

    monkeypatch.setattr(ReaderProcess, "read", dies_on_the_second_batch)
    values, progress = await index(listed, tmp_path / "data")
    monkeypatch.setattr(indexing, "HELPER_FROM", 10**9)
    alone, _ = await index(listed, tmp_path / "alone")
    assert calls >= 2 and values == alone
    assert progress.done == len(listed)
    assert rows(listed, tmp_path / "data") == rows(listed, tmp_path / "alone")


async def test_a_helper_whose_start_raises_leaves_the_reads_to_the_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexing, "HELPER_FROM", 1)
    monkeypatch.setattr(indexing, "CHUNK", 64)

    async def raises(self: ReaderProcess) -> bool:
        raise RuntimeError("not what a start expects")

    monkeypatch.setattr(ReaderProcess, "start", raises)
    listed = archive(tmp_path / "claude")
    values, progress = await index(listed, tmp_path / "data")
    monkeypatch.setattr(indexing, "HELPER_FROM", 10**9)
    alone, _ = await index(listed, tmp_path / "alone")
    assert values == alone and progress.done == len(listed)
