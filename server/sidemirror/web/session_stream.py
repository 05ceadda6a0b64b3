"""`GET /workspace/{id}/session/stream`: the session SSE stream (DESIGN §3).

Snapshot and live are separate entry points: the handler subscribes and reads the log in one
synchronous step (no await between them), so every item is either in what it sends first or in
its queue, never both and never neither; `sent` drops anything it already delivered.
"""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from aiohttp_sse import EventSourceResponse, sse_response

from sidemirror import __version__
from sidemirror.core.hub import (
    EphemeralPublished,
    ItemPublished,
    LogReset,
    Resync,
    SessionSwitched,
    StateChanged,
    Subscriber,
    session_topic,
    workspace_topic,
)
from sidemirror.core.models import PROTOCOL_VERSION
from sidemirror.core.store import SessionLog
from sidemirror.web.security import ticket_ok
from sidemirror.web.state import APP_STATE, AppState

RETRY_MS = 2000
SEND_BATCH = 256  # items per write when a client has several waiting


def _dumps(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class _Stream:
    """One client's stream: what it has been sent, and how to send the next thing."""

    def __init__(self, state: AppState, resp: EventSourceResponse, log: SessionLog, limit: int):
        self.state = state
        self.resp = resp
        self.log = log
        self.limit = limit
        self.sent = 0  # how many of the log's items this client has (an index, not a seq)

    async def hello(self) -> None:
        hello = {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "epoch": self.log.epoch,
            "workspace": self.log.workspace_id,
            "session": self.log.session_id,
            "version": __version__,
        }
        await self.resp.send(_dumps(hello), event="hello")

    def take_snapshot(self) -> tuple[str, str | None]:
        """Synchronously: the snapshot message and its id; marks its items as sent."""
        log, store = self.log, self.state.store
        total = len(log.items)
        start = max(0, total - self.limit)
        items = ",".join(store.iter_wire(log, start, total))
        cursor = log.cursor
        head = _dumps(
            {
                "type": "snapshot",
                "total": total,
                "cursor": cursor,
                "epoch": log.epoch,
                "session": log.session_id,
                "skipped_bytes": log.skipped_bytes,
            }
        )
        self.sent = total
        return head[:-1] + ',"items":[' + items + "]}", cursor

    async def send_snapshot(self, data_and_id: tuple[str, str | None]) -> None:
        data, cursor = data_and_id
        await self.resp.send(data, id=cursor, event="snapshot")

    async def send_reset(self, reason: str) -> None:
        await self.resp.send(
            _dumps({"type": "reset", "reason": reason, "epoch": self.log.epoch}), event="reset"
        )

    async def send_status(self, state: str) -> None:
        data = {"type": "session_status", "state": state, "session": self.log.session_id}
        await self.resp.send(_dumps(data), event="session_status")

    async def send_new_items(self, upto: int | None = None) -> None:
        """Send every item after `sent` (up to `upto` items; duplicates are skipped)."""
        log, store = self.log, self.state.store
        stop = len(log.items) if upto is None else min(upto, len(log.items))
        while self.sent < stop:
            start = self.sent
            end = min(stop, start + SEND_BATCH)
            self.sent = end
            # Items already waiting go out as one write, the same bytes aiohttp-sse writes (wire
            # JSON is one line): a write per item saturated the loop at 50 clients x 2,000/s.
            frames = "".join(store.sse_frame(log, i) for i in range(start, end))
            await self.resp.write(frames.encode("utf-8"))


@ticket_ok
async def session_stream(request: web.Request) -> web.StreamResponse:
    state = request.app[APP_STATE]
    store, hub = state.store, state.hub
    ws = store.workspace(request.match_info["ws"])
    if ws is None:
        raise web.HTTPNotFound(text=f"unknown workspace {request.match_info['ws']!r}")
    session_id = request.query.get("session")
    follow = session_id is None
    log = ws.latest_session() if follow else ws.sessions.get(session_id or "")
    if log is None:
        raise web.HTTPNotFound(text=f"unknown session {session_id!r} in workspace {ws.id}")
    limit = parse_limit(request, state.settings.snapshot_limit)
    last_id = request.headers.get("Last-Event-ID") or request.query.get("last_event_id")
    await store.load(log)

    async with sse_response(
        request, sep="\n", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    ) as resp:
        task = asyncio.current_task()
        if task is not None:
            state.streams.add(task)
        sub = hub.subscribe(
            workspace_topic(ws.id) if follow else session_topic(ws.id, log.session_id)
        )
        try:
            stream = _Stream(state, resp, log, limit)
            # Everything up to here is synchronous after subscribing: decide what to send first.
            resume = log.resume_point(last_id) if last_id else None
            snapshot: tuple[str, str | None] | None = None
            if resume is not None:
                stream.sent = resume  # exact replay: send_new_items sends what follows it
            else:
                snapshot = stream.take_snapshot()
            await resp.write(f"retry: {RETRY_MS}\n\n".encode())
            await stream.hello()
            if snapshot is not None:
                if last_id:
                    await stream.send_reset("unknown_or_stale_id")
                await stream.send_snapshot(snapshot)
            await stream.send_new_items()
            await _pump(stream, sub, follow, state)
        except (ConnectionError, TimeoutError):
            # The client hung up mid-write, or stalled past the send timeout and was dropped (it
            # resumes by id): the normal end of a stream, not an error.
            pass
        finally:
            hub.unsubscribe(sub)
            if task is not None:
                state.streams.discard(task)
    return resp


async def _pump(stream: _Stream, sub: Subscriber, follow: bool, state: AppState) -> None:
    store = state.store
    while True:
        message = await sub.queue.get()
        log = stream.log
        if isinstance(message, ItemPublished):
            if message.session_id == log.session_id:
                await stream.send_new_items()
        elif isinstance(message, EphemeralPublished):
            if message.session_id == log.session_id:
                item = message.item
                await stream.send_new_items(upto=message.stored)  # the stored items it follows
                # If items stored after it already went out, its complete item did too: stale.
                if stream.sent == message.stored:
                    await stream.resp.send(store.projector.to_json(item), event=item.type)
        elif isinstance(message, LogReset):
            if message.session_id == log.session_id:
                snapshot = stream.take_snapshot()
                await stream.send_reset("log_reset")
                await stream.send_snapshot(snapshot)
        elif isinstance(message, Resync):
            snapshot = stream.take_snapshot()
            await stream.send_reset("overflow")
            await stream.send_snapshot(snapshot)
        elif isinstance(message, StateChanged):
            if message.session_id == log.session_id:
                await stream.send_status(message.state)
        elif isinstance(message, SessionSwitched) and follow:
            ws = store.workspace(log.workspace_id)
            new_log = ws.sessions.get(message.session_id) if ws else None
            if new_log is None or new_log is log:
                continue
            await store.load(new_log)
            stream.log = new_log
            snapshot = stream.take_snapshot()
            await stream.send_status(new_log.state)
            await stream.send_snapshot(snapshot)


def parse_limit(request: web.Request, default: int) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 10_000:
        raise web.HTTPBadRequest(text=f"limit must be an integer from 1 to 10000, got {raw!r}")
    return int(raw)
