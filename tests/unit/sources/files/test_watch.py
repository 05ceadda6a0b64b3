"""sources/files/watch.py: file changes under roots that come and go, on inotify and on the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sidemirror.sources.files.watch import Backend, Batch, Change, pick_backend, watch_paths

LINUX = sys.platform.startswith("linux")
BACKENDS: list[Backend] = (["inotify"] if LINUX else []) + ["watchfiles"]
inotify_only = pytest.mark.skipif(not LINUX, reason="inotify is Linux-only")


def jsonl(path: Path) -> bool:
    return path.suffix == ".jsonl"


class Seen:
    """Every (change, path) the watcher reported, and the batches they came in."""

    def __init__(self, backend: Backend) -> None:
        self.batches: list[Batch] = []
        self.changed = asyncio.Event()
        self.strict = backend == "inotify"

    def has(self, change: Change, path: Path) -> bool:
        if not self.strict and change is not Change.deleted:
            # watchfiles may report a file created in a dir created just before it as modified,
            # and its next write as added; the sources treat both alike.
            either = (Change.added, Change.modified)
            return any((c, path) in b for b in self.batches for c in either)
        return any((change, path) in b for b in self.batches)

    async def wait(self, change: Change, path: Path, timeout: float = 5.0) -> None:
        await self.until(lambda: self.has(change, path), timeout, f"{change.name} {path}")

    async def appear(self, path: Path, timeout: float = 5.0) -> None:
        """`path` (just written) is reported. watchfiles (notify) can miss a file written right
        after its directory was created, until the file's next write: keep writing, as an agent
        would."""
        if self.strict:
            await self.wait(Change.added, path, timeout)
            return
        for _ in range(int(timeout / 0.25)):
            with contextlib.suppress(AssertionError):
                await self.wait(Change.added, path, 0.25)
                return
            with path.open("a") as fh:
                fh.write("{}\n")
        await self.wait(Change.added, path, 0.25)

    async def until(self, cond: Callable[[], bool], timeout: float, what: str = "") -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not cond():
            self.changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"not reported: {what}; got {self.batches}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), left)


@contextlib.asynccontextmanager
async def watching(roots: list[Path], backend: Backend, **kw: object) -> AsyncIterator[Seen]:
    seen = Seen(backend)
    stop = asyncio.Event()
    async with watch_paths(roots, accept=jsonl, stop_event=stop, backend=backend, **kw) as it:  # type: ignore[arg-type]

        async def consume() -> None:
            async for batch in it:
                seen.batches.append(batch)
                seen.changed.set()

        task = asyncio.create_task(consume())
        try:
            yield seen
        finally:
            stop.set()
            await asyncio.wait_for(task, 5)  # the stop event ends the iteration by itself


@pytest.mark.parametrize("backend", BACKENDS)
async def test_files_in_new_dirs_are_added_modified_deleted(
    tmp_path: Path, backend: Backend
) -> None:
    root = tmp_path / "projects"
    root.mkdir()
    async with watching([root], backend) as seen:
        sub = root / "proj" / "sess" / "subagents"
        sub.mkdir(parents=True)
        agent = sub / "agent-1.jsonl"
        agent.write_text('{"a": 1}\n')
        await seen.appear(agent)
        await asyncio.sleep(0.1 if seen.strict else 0.6)  # whatever is late, arrives now
        seen.batches.clear()
        with agent.open("a") as fh:
            fh.write('{"a": 2}\n')
        await seen.wait(Change.modified, agent)
        (root / "proj" / "notes.txt").write_text("x")  # not accepted: never reported
        seen.batches.clear()
        agent.unlink()
        await seen.wait(Change.deleted, agent)
        assert not any(p.suffix == ".txt" for b in seen.batches for _c, p in b)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dir_deleted_and_recreated(tmp_path: Path, backend: Backend) -> None:
    root = tmp_path / "projects"
    project = root / "proj"
    project.mkdir(parents=True)
    async with watching([root], backend) as seen:
        first = project / "a.jsonl"
        first.write_text("{}\n")
        await seen.wait(Change.added, first)
        shutil.rmtree(project)
        await seen.wait(Change.deleted, first)
        project.mkdir()
        again = project / "b.jsonl"
        again.write_text("{}\n")
        await seen.appear(again)
        with again.open("a") as fh:
            fh.write("{}\n")
        await seen.wait(Change.modified, again)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_root_created_after_start(tmp_path: Path, backend: Backend) -> None:
    root = tmp_path / "projects"  # its parent exists: both backends can see it appear
    async with watching([root], backend) as seen:
        (root / "proj").mkdir(parents=True)
        path = root / "proj" / "s.jsonl"
        path.write_text("{}\n")
        await seen.appear(path)
        with path.open("a") as fh:
            fh.write("{}\n")
        await seen.wait(Change.modified, path)
        # A file beside the root, under the watched parent, is not under a root.
        (tmp_path / "other.jsonl").write_text("{}\n")
        await asyncio.sleep(0.2 if backend == "inotify" else 0.6)
        assert not seen.has(Change.added, tmp_path / "other.jsonl")


@inotify_only
async def test_root_several_levels_missing_then_removed_and_recreated(tmp_path: Path) -> None:
    root = tmp_path / "home" / ".claude" / "projects"
    async with watching([root], "inotify") as seen:
        (tmp_path / "home").mkdir()
        (tmp_path / "home" / ".claude").mkdir()
        root.mkdir()
        path = root / "p" / "s.jsonl"
        path.parent.mkdir()
        path.write_text("{}\n")
        await seen.wait(Change.added, path)
        shutil.rmtree(tmp_path / "home" / ".claude")
        await seen.wait(Change.deleted, path)
        # Created in one go (before the watcher can follow step by step): found by listing.
        path.parent.mkdir(parents=True)
        path.write_text("{}\n")
        seen.batches.clear()
        await seen.wait(Change.added, path)


@inotify_only
async def test_only_down_to_max_depth(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "a" / "b").mkdir(parents=True)
    async with watching([root], "inotify", max_depth=1) as seen:
        deep = root / "a" / "b" / "deep.jsonl"
        deep.write_text("{}\n")
        shallow = root / "a" / "ok.jsonl"
        shallow.write_text("{}\n")
        await seen.wait(Change.added, shallow)
        await asyncio.sleep(0.1)
        assert not seen.has(Change.added, deep)


@inotify_only
async def test_a_burst_is_one_change_per_path(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    path = root / "s.jsonl"
    path.write_text("")
    async with watching([root], "inotify") as seen:
        with path.open("a") as fh:
            for n in range(200):  # no await in between: all queued before the loop reads
                fh.write(f"{n}\n")
                fh.flush()
        await seen.wait(Change.modified, path)
        assert len(seen.batches) == 1 and seen.batches[0] == [(Change.modified, path)]


@inotify_only
async def test_queue_overflow_rescans(tmp_path: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"max_queued_events is {limit}: too many writes to overflow it here")
    root = tmp_path / "r"
    (root / "p").mkdir(parents=True)
    a, b = root / "p" / "a.jsonl", root / "p" / "b.jsonl"
    a.write_text("")
    b.write_text("")
    old = root / "p" / "old.jsonl"
    old.write_text("{}\n")
    await asyncio.sleep(1.5)  # older than the rescan's margin: not reported again
    async with watching([root], "inotify") as seen:
        # Alternate two files so that the kernel cannot merge repeated events: the queue fills.
        with a.open("a") as fa, b.open("a") as fb:
            for _ in range(limit // 2 + 100):
                fa.write("x")
                fa.flush()
                fb.write("y")
                fb.flush()
        # Lost with the overflow: a new dir and its file, found by the rescan.
        (root / "q").mkdir()
        new = root / "q" / "n.jsonl"
        new.write_text("{}\n")
        await seen.until(
            lambda: all(seen.has(Change.modified, p) for p in (a, b, new)), 10, "rescan"
        )
        assert not seen.has(Change.modified, old)
        # The new dir is watched from now on.
        with new.open("a") as fh:
            fh.write("{}\n")
        seen.batches.clear()
        await seen.wait(Change.modified, new)


async def test_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDEMIRROR_WATCH", "watchfiles")
    assert pick_backend() == "watchfiles"
    monkeypatch.setenv("SIDEMIRROR_WATCH", "bogus")
    assert pick_backend() == ("inotify" if LINUX else "watchfiles")
    monkeypatch.delenv("SIDEMIRROR_WATCH")
    assert pick_backend("watchfiles") == "watchfiles"
    assert pick_backend() == ("inotify" if LINUX else "watchfiles")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_nothing_to_watch_waits_for_stop(tmp_path: Path, backend: Backend) -> None:
    stop = asyncio.Event()
    root = tmp_path / "a" / "b" / "c"
    async with watch_paths([root], accept=jsonl, stop_event=stop, backend=backend) as it:
        task = asyncio.create_task(anext(it, None))
        await asyncio.sleep(0.05)
        assert not task.done()
        stop.set()
        assert await asyncio.wait_for(task, 5) is None


@inotify_only
def test_the_event_bits_are_inotifys_own() -> None:
    from inotify_simple import flags
    from sidemirror.sources.files import watch

    names = [n for n in dir(watch) if n.startswith("IN_")]
    assert len(names) == 11
    for name in names:
        assert getattr(watch, name) == flags[name.removeprefix("IN_")].value, name
