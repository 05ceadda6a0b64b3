"""One Server-Sent Events response for every stream (the session stream, the activity stream).

Built on aiohttp-sse's `EventSourceResponse`; this module adds what each of our streams needs the
same way: the headers, the `retry:` hint, the client's resume cursor, and the bookkeeping that
lets shutdown close open streams instead of waiting on them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from aiohttp_sse import EventSourceResponse, sse_response

from sidemirror.core.models import SessionItem
from sidemirror.web.state import APP_STATE

RETRY_MS = 2000


class _Response(EventSourceResponse):
    """aiohttp-sse's response with our headers: it sets `Cache-Control: no-cache` itself, and a
    stream of session data must not be stored anywhere either (`no-store`, like every response)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.headers["Cache-Control"] = "no-store"
        self.headers["X-Content-Type-Options"] = "nosniff"


def last_event_id(request: web.Request) -> str | None:
    """The client's resume cursor: the `Last-Event-ID` header a browser sends on reconnect, or
    the `last_event_id` query parameter for a client's first connection."""
    return request.headers.get("Last-Event-ID") or request.query.get("last_event_id") or None


@asynccontextmanager
async def event_stream(request: web.Request) -> AsyncIterator[EventSourceResponse]:
    """An open SSE response that has sent `retry:`. A client hanging up (or stalling past the
    send timeout, after which it resumes by id) ends the stream normally, not as an error."""
    streams = request.app[APP_STATE].streams
    async with sse_response(request, sep="\n", response_cls=_Response) as resp:
        task = asyncio.current_task()
        if task is not None:
            streams.add(task)
        try:
            await resp.write(f"retry: {RETRY_MS}\n\n".encode())
            yield resp
        except (ConnectionError, TimeoutError):
            pass
        finally:
            if task is not None:
                streams.discard(task)


def item_frame(item: SessionItem, wire: str) -> str:
    """The SSE message of a stored item: `id:` (what Last-Event-ID will name), `event:`, `data:`.
    The same bytes `EventSourceResponse.send` writes, so several can go out in one write."""
    return f"id: {item.id}\nevent: {item.type}\ndata: {wire}\n\n"
