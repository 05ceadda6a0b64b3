"""Full-text search routes: one whole session (`GET /workspace/{id}/search`), and every session
on the machine (`GET /api/search`), answered from the index (index/search.py), newest first.

What the user typed is matched literally (index/search_query.py) unless `syntax=fts` asks for
FTS5's syntax; every answer carries `total`, and each hit the `matches` of the query in its
snippet (index/search_matches.py). No input is a 500: a blank one finds nothing (200), and
only a query in FTS5 syntax can be malformed (400)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from sidemirror.core.store import Store, resolve_workspace
from sidemirror.index.database import disk_refused
from sidemirror.index.search import SearchIndex
from sidemirror.index.search_feed import SearchFeed
from sidemirror.index.search_matches import shown
from sidemirror.index.search_query import SYNTAXES, Syntax, fts_query
from sidemirror.index.search_reads import BadQuery, IndexStarting
from sidemirror.index.search_tables import Doc
from sidemirror.web.bodies import error_response, parse_limit
from sidemirror.web.health import INDEXING
from sidemirror.web.health import SEARCH_FEED as SEARCH
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.state import APP_STATE

logger = logging.getLogger(__name__)
DEFAULT_HITS = 50
OPEN_RETRY_S = 5.0  # between two opens of the search index that a full disk refused


async def search_lifecycle(app: web.Application) -> AsyncIterator[None]:
    """Taps the store before the sources start (every item published from then on is queued
    for the index), and opens the index in the background once the sources have listed the
    archive: checking a big file takes a while, and the server listens meanwhile (searches
    answer 503 until it is open). Then sessions nobody opened are indexed."""
    state = app[APP_STATE]
    index = SearchIndex(state.settings.data_dir)
    feed = app[SEARCH] = SearchFeed(state.store, index)
    state.store.taps.append(feed.tap)

    opening: asyncio.Future[None] | None = None

    async def open_and_fill() -> None:
        nonlocal opening
        # Opening checks the whole file (seconds for a big index) and the backfill reads every
        # session: both after the listing, which a user waits for.
        await app[INDEXING].listed.wait()
        while True:
            opening = asyncio.ensure_future(asyncio.to_thread(index.start))
            try:
                await asyncio.shield(opening)  # cancelled at shutdown: the open itself runs on
                break
            except sqlite3.Error as error:
                if disk_refused(error) is None:
                    raise
                # A full disk: the index file is kept and opened once there is room (searches
                # answer 503 meanwhile); sessions, ingest and every other read go on.
                logger.warning("search index: cannot open (%s); trying again", error)
                await asyncio.sleep(OPEN_RETRY_S)
        feed.start()

    filling = asyncio.create_task(open_and_fill(), name="search-open")
    yield
    filling.cancel()
    # Its worker thread cannot be cancelled: wait for the open to end, then stop in order.
    if opening is not None:
        with contextlib.suppress(Exception):
            await asyncio.shield(opening)
    await feed.stop()
    state.store.taps.remove(feed.tap)
    await asyncio.to_thread(index.stop)


def _syntax(request: web.Request) -> Syntax:
    value = request.query.get("syntax", "literal")
    for syntax in SYNTAXES:
        if value == syntax:
            return syntax
    raise web.HTTPBadRequest(text=f"'syntax' must be one of {', '.join(SYNTAXES)}")


def _bad_query(error: BadQuery, syntax: Syntax) -> web.Response:
    hint = (
        ' (FTS5 syntax: quote a phrase or anything with punctuation: "foo-bar"; operators: '
        "AND OR NOT NEAR, prefix*; leave out syntax=fts to search the text as typed)"
        if syntax == "fts"
        else ""
    )
    return error_response(400, "bad_query", f"not a valid search: {error}{hint}")


async def _answer(request: web.Request, **where: str) -> web.Response:
    state = request.app[APP_STATE]
    feed = request.app[SEARCH]
    limit = parse_limit(request, DEFAULT_HITS)
    syntax = _syntax(request)
    try:
        query = fts_query(request.query.get("q", ""), syntax)
    except BadQuery as error:
        return _bad_query(error, syntax)
    if query is None:  # blank, or nothing a word could match
        return web.json_response({"hits": [], "total": 0})
    if not feed.index.ready:
        return _starting()
    try:
        hits, total = await asyncio.to_thread(feed.index.find, query, limit=limit, **where)
    except IndexStarting:
        return _starting()
    except BadQuery as error:
        return _bad_query(error, syntax)
    found = [h for h in (_hit(state.store, hit) for hit in hits) if h is not None]
    return web.json_response({"hits": found, "total": total})


def _starting() -> web.Response:
    """While the index opens, or is built again after damage was found in it."""
    return error_response(
        503, "index_starting", "the search index is opening or being rebuilt; try again"
    )


def _hit(store: Store, hit: Doc) -> dict[str, Any] | None:
    ws = store.workspace(hit.workspace)
    log = ws.sessions.get(hit.session) if ws is not None else None
    if log is None or (log.has_items and log.epoch != hit.epoch):
        return None  # a session gone, or rebuilt since: its old ids name nothing
    snippet, matches = shown(hit.body, store.projector.max_chars)
    return {
        "workspace": hit.workspace,
        "session": hit.session,
        "item_id": f"{hit.epoch}.{hit.seq}",
        "type": hit.type,
        "ts": hit.ts,
        "snippet": snippet,
        "matches": matches,
    }


async def search_session(request: web.Request) -> web.Response:
    """One whole session, read for the index first if it was not yet (however large)."""
    ws = workspace_of(request)
    log = session_of(ws, request.query.get("session"))
    if request.app[SEARCH].index.ready and request.query.get("q", "").strip():
        await request.app[SEARCH].ensure(log)
    return await _answer(request, workspace=ws.id, session=log.session_id)


async def search_all(request: web.Request) -> web.Response:
    where = {}
    if "workspace" in request.query:
        where["workspace"] = resolve_workspace(request.query["workspace"]).id
    if request.app[SEARCH].index.ready and request.query.get("q", "").strip():
        await request.app[SEARCH].caught_up()
    return await _answer(request, **where)
