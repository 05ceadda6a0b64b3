"""`GET /workspace/{id}/session?before=ITEM_ID`: a page of the items just before one a client holds;
`?from=start` and `?after=ITEM_ID`: the session's first items, and those just after one.

The panel scrolls up through a whole session this way, 200 items at a time, down to its first
item, including the skipped part of a huge transcript (read on demand: core/history.py). "Go to
start" reads the first page in one request, and the reader scrolls down from there.
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.core.history import Page, UnknownItem, page_after, page_before
from sidemirror.core.store import SessionLog, Store
from sidemirror.core.views import dumps, snapshot_head


async def history_page(store: Store, log: SessionLog, before: str, limit: int) -> web.Response:
    """The snapshot's head, `items` (oldest first) and `has_more`: whether items precede them."""
    try:
        page = await page_before(store, log, before, limit)
    except UnknownItem as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return _answer(log, page)


async def later_page(store: Store, log: SessionLog, after: str | None, limit: int) -> web.Response:
    """The snapshot's head, `items` (oldest first: the first ones for `after` None, else those
    just after it) and `has_more`: whether items follow them."""
    try:
        page = await page_after(store, log, after, limit)
    except UnknownItem as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return _answer(log, page)


def _answer(log: SessionLog, page: Page) -> web.Response:
    head = dumps({**snapshot_head(log), "has_more": page.has_more})
    body = head[:-1] + ',"items":[' + ",".join(page.wire) + "]}"
    return web.Response(text=body, content_type="application/json")
