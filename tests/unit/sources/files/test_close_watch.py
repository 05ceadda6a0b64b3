"""sources/files/close_watch.py: writes to followed files, reported at once; and the folders'
watch resting between its rounds (watch.py's `rest_s`) while they are."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sidemirror.sources.files.close_watch import CloseWatch
from sidemirror.sources.files.watch import Batch, Change, watch_paths

from tests.harness.waiting import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify only")


def write(path: Path, text: str = "{}\n") -> None:
    with path.open("a") as fh:
        fh.write(text)


@contextlib.asynccontextmanager
async def reading(close: CloseWatch) -> AsyncIterator[list[Path]]:
    """Every path `close` reports, in order, while the block runs."""
    seen: list[Path] = []

    async def consume() -> None:
        async for paths in close.batches():
            seen.extend(paths)

    task = asyncio.create_task(consume())
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        close.close()


async def test_writes_to_watched_files_only_are_reported(tmp_path: Path) -> None:
    followed, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write(followed)
    write(other)
    close = CloseWatch.open()
    assert close is not None
    close.add(followed)
    async with reading(close) as seen:
        write(other)
        write(followed)
        await until(lambda: followed in seen, 10, "the followed file's write")
        assert other not in seen and other not in close
        # Dropped: its writes are the folders' watch's again.
        close.discard(followed)
        assert followed not in close
        write(followed)
        close.add(other)
        write(other)
        await until(lambda: other in seen, 10, "the newly followed file's write")
        assert seen.count(followed) == 1


async def test_a_replaced_file_ends_its_watch_and_can_be_watched_again(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write(path)
    close = CloseWatch.open()
    assert close is not None
    close.add(path)
    async with reading(close) as seen:
        new = tmp_path / "new.jsonl"
        write(new)
        os.replace(new, path)  # the old file is gone: its watch ends, no write is reported
        await until(lambda: path not in close, 10, "the replaced file's watch to end")
        assert seen == []
        close.add(path)  # the new file in its place, as the source does when it reads it
        write(path)
        await until(lambda: seen == [path], 10, "the new file's write")


async def test_each_write_wakes_the_watch_once_and_it_stays_registered(tmp_path: Path) -> None:
    """The fd stays with the loop while `batches` runs, and each wake reads everything queued:
    a wake that left events behind would be called again at once, the loop spinning."""
    path = tmp_path / "a.jsonl"
    write(path)
    close = CloseWatch.open()
    assert close is not None
    close.add(path)
    wakes = 0
    readable = close._readable

    def counted() -> None:
        nonlocal wakes
        wakes += 1
        readable()

    close._readable = counted  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()
    registered: list[int] = []
    add_reader = loop.add_reader

    def add_reader_counted(fd: int, *args: object) -> None:
        registered.append(fd)
        add_reader(fd, *args)

    loop.add_reader = add_reader_counted  # type: ignore[method-assign]
    try:
        async with reading(close) as seen:
            for n in range(1, 21):
                write(path)
                await until(lambda n=n: len(seen) == n, 10, f"write {n} reported")
            assert wakes == 20  # one each, none of them left anything behind
            assert registered == [close.fd]  # once, for the whole run
    finally:
        loop.add_reader = add_reader  # type: ignore[method-assign]


async def test_take_does_not_wait(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write(path)
    close = CloseWatch.open()
    assert close is not None
    try:
        close.add(path)
        assert close.take() == []
        write(path)
        write(path)
        # The kernel queues the events at write(): they are there to take at once, as one.
        assert close.take() == [path]
        assert close.take() == []
    finally:
        close.close()


async def test_the_folders_watch_gathers_changes_while_it_rests(tmp_path: Path) -> None:
    """After each batch the watch rests `rest_s`: what changes meanwhile comes as one batch."""
    first, second, third = (tmp_path / f"{n}.jsonl" for n in ("a", "b", "c"))
    batches: list[Batch] = []
    stop = asyncio.Event()
    async with watch_paths(
        [tmp_path], accept=lambda p: p.suffix == ".jsonl", stop_event=stop, rest_s=1.0
    ) as it:

        async def consume() -> None:
            async for batch in it:
                batches.append(batch)

        task = asyncio.create_task(consume())
        try:
            write(first)
            await until(lambda: batches, 10, "the first batch")
            write(second)  # the watch rests now: these two wait, together
            write(third)
            await until(lambda: len(batches) >= 2, 10, "the second batch")
            assert batches == [
                [(Change.added, first)],
                [(Change.added, second), (Change.added, third)],
            ]
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)  # the rest ends when the watch stops
