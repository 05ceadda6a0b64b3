"""One file watcher for every remote host's mirror.

Each forwarded host is read by a Claude and a Codex source, and each source used to open its
own watcher: an inotify instance apiece, two per host. The per-user limit
(`fs.inotify.max_user_instances`, often 128) is shared with every other program of the user, so
a forwarder saying hello under many labels made editors and build tools fail to watch files.
Here one watcher covers the whole mirror folder (`<data dir>/remote`), and each source
subscribes to the part of it it reads: one inotify instance whatever the number of hosts.

`MirrorWatcher.watch` has the shape of `watch_paths`, so a source takes it as its `watch=`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sidemirror.sources.files.watch import Accept, Batch, _Coalescer, watch_paths

logger = logging.getLogger(__name__)


@dataclass
class _Subscriber:
    roots: list[Path]
    accept: Accept
    max_depth: int | None
    queue: asyncio.Queue[Batch] = field(default_factory=asyncio.Queue)

    def wants(self, path: Path) -> bool:
        for root in self.roots:
            if path == root or root in path.parents:
                # A file in a dir at max_depth is one part deeper than that dir.
                depth = len(path.relative_to(root).parts) - 1
                return (self.max_depth is None or depth <= self.max_depth) and self.accept(path)
        return False


class MirrorWatcher:
    """Watches `root` once, from `start()` to `stop()`, and hands each subscriber its changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._subscribers: list[_Subscriber] = []
        self._stop = asyncio.Event()
        self._watching = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="mirror-watch")
        # Once started, every later change under `root` is seen: a subscriber misses nothing.
        waiter = asyncio.ensure_future(self._watching.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():
            self._task.result()  # the watch could not start: say why

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        # Every path is passed on; each subscriber applies its own filter.
        async with watch_paths([self.root], accept=lambda _p: True, stop_event=self._stop) as it:
            self._watching.set()
            async for batch in it:
                for subscriber in self._subscribers:
                    mine = [(change, path) for change, path in batch if subscriber.wants(path)]
                    if mine:
                        subscriber.queue.put_nowait(mine)

    @contextlib.asynccontextmanager
    async def watch(
        self,
        roots: Sequence[Path],
        *,
        accept: Accept,
        max_depth: int | None = None,
        stop_event: asyncio.Event | None = None,
        step_ms: int = 10,  # noqa: ARG002 (the shape of watch_paths)
        rest_s: float = 0.0,  # noqa: ARG002 (shared by every host: it reads changes at once)
    ) -> AsyncIterator[AsyncIterator[Batch]]:
        """Changes under `roots` (inside `root`), as `watch_paths` gives them."""
        subscriber = _Subscriber([Path(os.path.abspath(r)) for r in roots], accept, max_depth)
        self._subscribers.append(subscriber)
        try:
            yield _batches(subscriber.queue, stop_event or asyncio.Event())
        finally:
            self._subscribers.remove(subscriber)


async def _batches(queue: asyncio.Queue[Batch], stop: asyncio.Event) -> AsyncIterator[Batch]:
    """The subscriber's batches until `stop`; those queued meanwhile are merged into one."""
    while not stop.is_set():
        getter = asyncio.ensure_future(queue.get())
        stopper = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            getter.cancel()
        if not getter.done() or getter.cancelled():
            return
        merged = _Coalescer()
        for change, path in getter.result():
            merged.add(change, path)
        while not queue.empty():
            for change, path in queue.get_nowait():
                merged.add(change, path)
        yield merged.take()
