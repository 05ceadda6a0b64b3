"""Who this server is, and tickets for streams: `/health`, `/api/ticket` (pairing: web/pair.py)."""

from __future__ import annotations

import time

from aiohttp import web

from sidemirror.index.search_feed import SearchFeed
from sidemirror.sources.files.indexing import Indexing
from sidemirror.web.about import about
from sidemirror.web.identify import SERVER_ID
from sidemirror.web.security import public
from sidemirror.web.state import APP_STATE

# The sources' startup indexing, which runs after the server listens (sources/files/indexing.py).
INDEXING = web.AppKey("indexing", Indexing)
# The search index's feed, set when the index is open (web/search.py).
SEARCH_FEED = web.AppKey("search_feed", SearchFeed)


def search_progress(app: web.Application) -> dict[str, int] | None:
    feed = app.get(SEARCH_FEED)
    return None if feed is None else feed.progress()


@public
async def health(request: web.Request) -> web.Response:
    # Never a token here: any process of this OS user may read /health.
    state = request.app[APP_STATE]
    return web.json_response(
        {
            **about(request.app[SERVER_ID]),
            "status": "ok",
            "instance": state.instance,
            "uptime_s": round(time.monotonic() - state.started, 3),
            "workspaces": len(state.store.workspaces),
            # Files on disk indexed so far: the listing is partial until done == total.
            "indexing": request.app[INDEXING].as_json(),
            # The latest problems, newest first: which file, where, why (paths redacted).
            "parse_errors_detail": list(reversed(state.store.parse_error_details)),
            "parse_errors": state.store.parse_errors,
            "streams": len(state.streams),  # open SSE streams (session and activity)
            # Sessions the search index holds whole, out of those known (index/search_feed.py).
            "search_index": search_progress(request.app),
        }
    )


async def ticket(request: web.Request) -> web.Response:
    tickets = request.app[APP_STATE].guard.tickets
    return web.json_response({"ticket": tickets.issue(), "expires_in": int(tickets.ttl_s)})
