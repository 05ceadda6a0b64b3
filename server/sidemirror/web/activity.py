"""HTTP side of browse activity (docs/api.md).

- `POST /api/activity`: one entry or a JSON array → `{"accepted","rejected","ids"[,"errors"]}`
  (400 when nothing in the body was accepted). Answered once the entries are durable; when the
  disk refuses one, 507 `disk_full` with the same counts and `first_unstored`, the
  index of the first entry not stored (those before it are stored; none after it is applied).
- `GET /api/activity/ws`: WebSocket ingest, one JSON entry (or array) per text frame; each frame
  is answered with running totals and the ids it got, so a sender can wait for them (on a full
  disk: the 507 body as a frame, then the socket closes).
- `GET /activity/stream[?workspace=ID|DIR][&limit=N]`: SSE, `event: activity` with `id:`.
- `GET /api/refs?url=URL`: the latest element refs reported for that page.
- `GET /api/activity/latest-workspace`: the workspace whose agent acted in the browser last.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web
from aiohttp_sse import EventSourceResponse

from sidemirror.activity.links import BrowserLinks
from sidemirror.activity.log import RING_SIZE, ActivityLog, Subscriber
from sidemirror.core.durable import StorageError
from sidemirror.core.models import ActivityEntry
from sidemirror.core.redact import redact_url
from sidemirror.core.store import resolve_workspace
from sidemirror.core.views import dumps
from sidemirror.web.bodies import WS_FRAME_LIMIT, parse_limit, read_json
from sidemirror.web.browser_links import BROWSER_LINKS
from sidemirror.web.security import ticket_ok
from sidemirror.web.sse import event_stream, last_event_id
from sidemirror.web.state import APP_STATE

MAX_ERRORS_SHOWN = 5
INSUFFICIENT_STORAGE = 507


class _Batch:
    """Accept/reject bookkeeping for one request or WebSocket connection."""

    def __init__(self, log: ActivityLog) -> None:
        self.log = log
        self.accepted = 0
        self.rejected = 0
        self.ids: list[str] = []
        self.errors: list[str] = []
        self.refused: tuple[int, StorageError] | None = None  # (entry index, why)

    async def feed(self, body: object) -> None:
        """Report each entry, then sync; stops at the first entry the disk refuses."""
        items = body if isinstance(body, list) else [body]
        for index, raw in enumerate(items):
            try:
                self.ids.append(self.log.report(raw).id)
                self.accepted += 1
            except ValueError as exc:
                self.rejected += 1
                if len(self.errors) < MAX_ERRORS_SHOWN:
                    where = f"entry {index}: " if isinstance(body, list) else ""
                    self.errors.append(where + str(exc)[:300])
            except StorageError as exc:
                self.refused = (index, exc)
                break
        try:
            await self.log.sync()
        except StorageError as exc:
            self.refused = self.refused or (0, exc)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "accepted": self.accepted,
            "rejected": self.rejected,
            "ids": self.ids,
        }
        if self.errors:
            out["errors"] = self.errors
        if self.refused is not None:
            index, error = self.refused
            out = {**error.body(), **out, "first_unstored": index}
        return out


async def post_activity(request: web.Request) -> web.Response:
    body = await read_json(request)
    batch = _Batch(request.app[APP_STATE].activity)
    await batch.feed(body)
    if batch.refused is not None:
        return web.json_response(batch.result(), status=INSUFFICIENT_STORAGE)
    if batch.rejected and not batch.accepted:
        raise web.HTTPBadRequest(text="; ".join(batch.errors))
    return web.json_response(batch.result())


async def activity_ws(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(max_msg_size=WS_FRAME_LIMIT, heartbeat=30)
    await ws.prepare(request)  # the middleware has checked Host, Origin and token before 101
    batch = _Batch(request.app[APP_STATE].activity)
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            batch.ids, batch.errors = [], []
            try:
                body = json.loads(msg.data)
            except ValueError as exc:
                batch.rejected += 1
                batch.errors.append(f"frame is not valid JSON: {exc}")
            else:
                await batch.feed(body)
            await ws.send_json(batch.result())
            if batch.refused is not None:
                await ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"insufficient storage")
        elif msg.type == WSMsgType.BINARY:
            await ws.close(message=b"text frames only")
    return ws


def _workspace_param(request: web.Request) -> str | None:
    value = request.query.get("workspace")
    return resolve_workspace(value).id if value else None


async def _send_entries(
    resp: EventSourceResponse, entries: list[ActivityEntry], links: BrowserLinks
) -> None:
    # Each entry goes out with the tool call that explains it, if any (browser-link).
    for entry, text in zip(entries, await links.wire_json(entries), strict=True):
        await resp.send(text, id=entry.id, event="activity")


async def _send_gap(resp: EventSourceResponse, missed: int, reset: bool = False) -> None:
    await resp.send(dumps({"type": "gap", "missed": missed, "reset": reset}), event="gap")


@ticket_ok
async def activity_stream(request: web.Request) -> web.StreamResponse:
    log = request.app[APP_STATE].activity
    ws_id = _workspace_param(request)
    limit = parse_limit(request, RING_SIZE)
    last_id = last_event_id(request)
    async with event_stream(request) as resp:
        sub = log.subscribe(ws_id)
        try:
            # Synchronous from subscribing to `sent`: every entry is in the first batch or
            # will wake the subscriber, never both and never neither.
            gap: tuple[int, bool] | None = None
            cursor = log.parse_cursor(last_id) if last_id else None
            if cursor is not None:
                missed, first = log.since(cursor, ws_id)
                gap = (missed, False) if missed else None
            else:
                first = log.entries(ws_id, limit)
                if last_id:  # another epoch or not an id of ours
                    gap = (log.evicted_count(ws_id), True)
            sent = log.seq
            if gap is not None:
                await _send_gap(resp, *gap)
            await _send_entries(resp, first, request.app[BROWSER_LINKS])
            await _pump(resp, log, sub, ws_id, sent, request.app[BROWSER_LINKS])
        finally:
            log.unsubscribe(sub)
    return resp


async def _pump(
    resp: EventSourceResponse,
    log: ActivityLog,
    sub: Subscriber,
    ws_id: str | None,
    sent: int,
    links: BrowserLinks,
) -> None:
    while True:
        await sub.wakeup.wait()
        sub.wakeup.clear()
        # A client slower than the ring finds its next entries evicted: it gets a gap, and
        # memory stays bounded because nothing is queued per client.
        missed, fresh = log.since(sent, ws_id)
        sent = log.seq
        if missed:
            await _send_gap(resp, missed)
        await _send_entries(resp, fresh, links)


async def refs(request: web.Request) -> web.Response:
    url = request.query.get("url")
    if not url:
        raise web.HTTPBadRequest(text="query parameter 'url' is required")
    entry = request.app[APP_STATE].activity.refs_for(url)
    return web.json_response(
        {
            "url": redact_url(url) if entry is None else entry.url,
            "refs": [] if entry is None else [r.model_dump() for r in entry.refs],
            "id": None if entry is None else entry.id,
            "ts": None if entry is None else entry.ts,
            "workspace": None if entry is None else entry.workspace,
        }
    )


async def latest_workspace(request: web.Request) -> web.Response:
    latest = request.app[APP_STATE].activity.latest_workspace()
    if latest is None:
        return web.json_response({"workspace": None, "directory": None, "id": None, "ts": None})
    ws_id, directory, entry = latest
    return web.json_response(
        {"workspace": ws_id, "directory": directory, "id": entry.id, "ts": entry.ts}
    )
