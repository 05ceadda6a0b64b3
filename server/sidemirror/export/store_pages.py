"""A session's pages read from the server's own store, for the export route (web/
session_export.py): the walk runs in a worker thread, and each read it makes runs on the event
loop, as the matching route would answer it (`GET …/session`, `before=`, `…/items/{id}`), so
an export from the panel holds exactly what `sidemirror export` writes."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from sidemirror.core.history import UnknownItem, item_at, page_before
from sidemirror.core.projection import full_dict
from sidemirror.core.store import SessionLog, Store
from sidemirror.core.views import snapshot_json
from sidemirror.export.api import ExportError

T = TypeVar("T")
READ_TIMEOUT_S = 300.0  # a page back in a huge transcript is slow (the CLI waits 120 s a read)


class StorePages:
    """walker.SessionPages over a store; its methods are called from a worker thread."""

    def __init__(
        self,
        store: Store,
        log: SessionLog,
        loop: asyncio.AbstractEventLoop,
        stopping: threading.Event,
    ) -> None:
        self.store = store
        self.log = log
        self.loop = loop
        self.stopping = stopping  # set when nobody waits for the export any more

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.stopping.is_set():
            coro.close()
            raise ExportError("the export was stopped")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(READ_TIMEOUT_S)

    def page(self, before: str | None, limit: int) -> dict[str, Any]:
        return self._run(self._page(before, limit))

    def whole(self, item_id: str) -> dict[str, Any]:
        return self._run(self._whole(item_id))

    async def _page(self, before: str | None, limit: int) -> dict[str, Any]:
        await self.store.load(self.log)
        if before is None:
            answer: dict[str, Any] = json.loads(snapshot_json(self.store, self.log, limit))
            return answer
        try:
            page = await page_before(self.store, self.log, before, limit)
        except UnknownItem as exc:  # the source was rebuilt while the export read it
            raise ExportError(str(exc)) from None
        return {"has_more": page.has_more, "items": [json.loads(w) for w in page.wire]}

    async def _whole(self, item_id: str) -> dict[str, Any]:
        item = await item_at(self.store, self.log, item_id)
        if item is None:
            raise ExportError(f"no item {item_id!r} in this session")
        return full_dict(item)
