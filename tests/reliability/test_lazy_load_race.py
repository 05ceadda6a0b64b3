"""Two clients opening a not-yet-parsed session at once (the common case right after a restart)
must both wait for its parse: the second must not see an empty log under an empty epoch, which
turns its valid Last-Event-ID into a spurious `reset` and a full re-download."""

from __future__ import annotations

import asyncio

from sidemirror.core.hub import Hub
from sidemirror.core.models import UserEvent
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store


async def test_concurrent_readers_wait_for_the_lazy_load() -> None:
    store = Store(Hub(), Projector())
    ws = store.ensure_workspace("/home/dev/p", "claude")
    log = store.ensure_session(ws, "s", "claude", "")
    calls = 0

    async def loader(target: SessionLog) -> None:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.05)  # parsing in a worker thread
        target.epoch = "e1"
        store.append(target, UserEvent(content="hello"))

    log.loader = loader

    async def reader() -> tuple[str, int]:
        await store.load(log)
        return log.epoch, len(log.items)

    assert await asyncio.gather(reader(), reader(), reader()) == [("e1", 1)] * 3
    assert calls == 1


async def test_a_reader_that_disconnects_does_not_cancel_the_load_for_others() -> None:
    store = Store(Hub(), Projector())
    ws = store.ensure_workspace("/home/dev/p", "claude")
    log = store.ensure_session(ws, "s", "claude", "")

    async def loader(target: SessionLog) -> None:
        await asyncio.sleep(0.05)
        target.epoch = "e1"
        store.append(target, UserEvent(content="hello"))

    log.loader = loader
    first = asyncio.create_task(store.load(log))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(store.load(log))
    await asyncio.sleep(0)
    first.cancel()  # the first client went away mid-load
    await asyncio.wait_for(second, 2)
    assert (log.epoch, len(log.items)) == ("e1", 1)
