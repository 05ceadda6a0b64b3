"""HTTP side of browse activity (DESIGN §2, §5).

- `POST /api/activity`: one entry or a JSON array → `{"accepted","rejected","ids"[,"errors"]}`
  (400 when nothing in the body was accepted).
- `GET /api/activity/ws`: WebSocket ingest, one JSON entry (or array) per text frame; each frame
  is answered with running totals and the ids it got, so a sender can wait for them.
- `GET /activity/stream[?workspace=ID|DIR][&limit=N]`: SSE, `event: activity` with `id:`.
- `GET /api/refs?url=URL`: the latest element refs reported for that page.
- `GET /api/activity/latest-workspace`: the workspace whose agent acted in the browser last.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import WSMsgType, web
from aiohttp_sse import EventSourceResponse, sse_response

from sidemirror.activity.entries import workspace_of
from sidemirror.activity.log import ACTIVITY, RING_SIZE, ActivityLog, Subscriber
from sidemirror.core.models import ActivityEntry
from sidemirror.core.redact import redact_url
from sidemirror.web.security import read_json, ticket_ok
from sidemirror.web.session_stream import parse_limit
from sidemirror.web.state import APP_STATE

routes = web.RouteTableDef()
WS_FRAME_LIMIT = 1 << 20
RETRY_MS = 2000
MAX_ERRORS_SHOWN = 5


class _Batch:
    """Accept/reject bookkeeping for one request or WebSocket connection."""

    def __init__(self, log: ActivityLog) -> None:
        self.log = log
        self.accepted = 0
        self.rejected = 0
        self.ids: list[str] = []
        self.errors: list[str] = []

    def feed(self, body: object) -> None:
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

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "accepted": self.accepted, "rejected": self.rejected, "ids": self.ids
        }
        if self.errors:
            out["errors"] = self.errors
        return out


@routes.post("/api/activity")
async def post_activity(request: web.Request) -> web.Response:
    body = await read_json(request)
    batch = _Batch(request.app[ACTIVITY])
    batch.feed(body)
    if batch.rejected and not batch.accepted:
        raise web.HTTPBadRequest(text="; ".join(batch.errors))
    return web.json_response(batch.result())


@routes.get("/api/activity/ws")
async def activity_ws(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(max_msg_size=WS_FRAME_LIMIT, heartbeat=30)
    await ws.prepare(request)  # the middleware has checked Host, Origin and token before 101
    batch = _Batch(request.app[ACTIVITY])
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            batch.ids, batch.errors = [], []
            try:
                batch.feed(json.loads(msg.data))
            except ValueError as exc:
                batch.rejected += 1
                batch.errors.append(f"frame is not valid JSON: {exc}")
            await ws.send_json(batch.result())
        elif msg.type == WSMsgType.BINARY:
            await ws.close(message=b"text frames only")
    return ws


def _workspace_param(request: web.Request) -> str | None:
    try:
        ws_id, _ = workspace_of({"workspace": request.query.get("workspace")})
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    return ws_id


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


async def _send_entries(resp: EventSourceResponse, entries: list[ActivityEntry]) -> None:
    for entry in entries:
        await resp.send(entry.model_dump_json(), id=entry.id, event="activity")


async def _send_gap(resp: EventSourceResponse, missed: int, reset: bool = False) -> None:
    await resp.send(_dumps({"type": "gap", "missed": missed, "reset": reset}), event="gap")


@routes.get("/activity/stream")
@ticket_ok
async def activity_stream(request: web.Request) -> web.StreamResponse:
    log = request.app[ACTIVITY]
    streams = request.app[APP_STATE].streams
    ws_id = _workspace_param(request)
    limit = parse_limit(request, RING_SIZE)
    last_id = request.headers.get("Last-Event-ID") or request.query.get("last_event_id")
    async with sse_response(
        request, sep="\n", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    ) as resp:
        task = asyncio.current_task()
        if task is not None:
            streams.add(task)
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
            await resp.write(f"retry: {RETRY_MS}\n\n".encode())
            if gap is not None:
                await _send_gap(resp, *gap)
            await _send_entries(resp, first)
            await _pump(resp, log, sub, ws_id, sent)
        except (ConnectionError, TimeoutError):
            pass  # the client hung up or stalled past the send timeout: a normal end
        finally:
            log.unsubscribe(sub)
            if task is not None:
                streams.discard(task)
    return resp


async def _pump(
    resp: EventSourceResponse, log: ActivityLog, sub: Subscriber, ws_id: str | None, sent: int
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
        await _send_entries(resp, fresh)


@routes.get("/api/refs")
async def refs(request: web.Request) -> web.Response:
    url = request.query.get("url")
    if not url:
        raise web.HTTPBadRequest(text="query parameter 'url' is required")
    entry = request.app[ACTIVITY].refs_for(url)
    return web.json_response(
        {
            "url": redact_url(url) if entry is None else entry.url,
            "refs": [] if entry is None else [r.model_dump() for r in entry.refs],
            "id": None if entry is None else entry.id,
            "ts": None if entry is None else entry.ts,
            "workspace": None if entry is None else entry.workspace,
        }
    )


@routes.get("/api/activity/latest-workspace")
async def latest_workspace(request: web.Request) -> web.Response:
    latest = request.app[ACTIVITY].latest_workspace()
    if latest is None:
        return web.json_response({"workspace": None, "directory": None, "id": None, "ts": None})
    ws_id, directory, entry = latest
    return web.json_response(
        {"workspace": ws_id, "directory": directory, "id": entry.id, "ts": entry.ts}
    )
