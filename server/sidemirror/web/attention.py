"""Every session's live state (attention/board.py).

- `GET /api/attention`: `{"sessions": [...]}`, every live session on the machine.
- `GET /api/attention/stream` (token or ticket): SSE; `event: sessions` with that listing
  first (and again if the client fell behind), then `event: state`
  `{"workspace","session","state","reason","since","title",…}` on each change.
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.core.views import dumps
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import ticket_ok
from sidemirror.web.sse import event_stream


async def list_attention(request: web.Request) -> web.Response:
    return web.json_response({"sessions": request.app[ATTENTION].board.live()})


@ticket_ok
async def attention_stream(request: web.Request) -> web.StreamResponse:
    board = request.app[ATTENTION].board
    async with event_stream(request) as resp:
        queue = board.subscribe()
        try:
            await resp.send(dumps({"sessions": board.live()}), event="sessions")
            while True:
                change = await queue.get()
                if change is None:  # fell behind: the whole listing again
                    await resp.send(dumps({"sessions": board.live()}), event="sessions")
                else:
                    await resp.send(dumps(change), event="state")
        finally:
            board.unsubscribe(queue)
    return resp
