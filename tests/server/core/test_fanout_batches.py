"""Fan-out by batch: what one read of a real, tailed transcript adds reaches each subscriber as
one queue entry, in order, while the queue's bound still counts items (a client that cannot take
them all overflows exactly as it did with an entry per item)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sidemirror.core.hub import ItemsPublished, Message, Resync, Subscriber, session_topic
from sidemirror.core.store import SessionLog, Store

from tests.server.sources.claude.test_live import FIX, SID, content, setup_project, started


async def _expected_after(tmp_path: Path, initial: int) -> list[dict[str, object]]:
    """What the whole of turn-2 adds after the first `initial` items, parsed from scratch."""
    ref_main = setup_project(tmp_path / "ref")
    shutil.copyfile(FIX / "turn-2.jsonl", ref_main)
    _, ref_source, ref_log = await started(tmp_path / "ref")
    await ref_source.stop()
    return content(ref_log)[initial:]


@asynccontextmanager
async def _tailed(
    tmp_path: Path,
) -> AsyncIterator[tuple[Store, SessionLog, list[dict[str, object]], Path]]:
    """A live session tailed by the real source, and what the rest of its turn will add."""
    main = setup_project(tmp_path)
    store, source, log = await started(tmp_path)
    try:
        expected = await _expected_after(tmp_path, len(log.items))
        assert len(expected) > 10
        yield store, log, expected, main
    finally:
        await source.stop()


def _append_rest(main: Path) -> None:
    """The rest of the turn in one write: one read of the tailer, or a few."""
    with open(main, "ab") as fh:
        fh.write((FIX / "turn-2.jsonl").read_bytes()[main.stat().st_size :])


async def _until_items(sub: Subscriber, want: int) -> list[Message]:
    got: list[Message] = []
    async with asyncio.timeout(10):
        while sum(len(m.items) for m in got if isinstance(m, ItemsPublished)) < want:
            got.append(await sub.get())
    return got


async def test_one_read_is_one_entry_per_subscriber(tmp_path: Path) -> None:
    async with _tailed(tmp_path) as (store, log, expected, main):
        initial = len(log.items)
        subs = [store.hub.subscribe(session_topic(log.workspace_id, SID)) for _ in range(3)]
        _append_rest(main)
        for sub in subs:
            messages = await _until_items(sub, len(expected))
            assert all(isinstance(m, ItemsPublished) for m in messages)
            items = [i for m in messages if isinstance(m, ItemsPublished) for i in m.items]
            assert [i.model_dump(exclude={"id", "seq"}) for i in items] == expected
            assert [i.id for i in items] == [i.id for i in list(log.items)[initial:]]
            # An entry per read, not per item: the fan-out's cost no longer grows per item.
            assert len(messages) < len(items) / 4
            rest = [sub.queue.get_nowait() for _ in range(sub.queue.qsize())]
            assert not any(isinstance(m, ItemsPublished) for m in rest)  # e.g. state: idle


async def test_the_bound_still_counts_items(tmp_path: Path) -> None:
    async with _tailed(tmp_path) as (store, log, expected, main):
        want = len(expected)
        topic = session_topic(log.workspace_id, SID)
        store.hub.queue_size = want + 8  # room for the items and a state change or two
        roomy = store.hub.subscribe(topic)
        store.hub.queue_size = want - 1
        short = store.hub.subscribe(topic)
        _append_rest(main)
        messages = await _until_items(roomy, want)
        assert not any(isinstance(m, Resync) for m in messages) and roomy.overflows == 0
        # One item short of room: it overflows (re-snapshot), as with an entry per item.
        assert isinstance(await asyncio.wait_for(short.get(), 10), Resync)
        assert short.overflows == 1
