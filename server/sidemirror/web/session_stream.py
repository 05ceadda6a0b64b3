"""`GET /workspace/{id}/session/stream`: the session SSE stream (docs/api.md).

Snapshot and live are separate entry points: the handler subscribes and reads the log in one
synchronous step (no await between them), so every item is either in what it sends first or in
its queue, never both and never neither; `sent` drops anything it already delivered.
"""

from __future__ import annotations

from aiohttp import web
from aiohttp_sse import EventSourceResponse

from sidemirror import PROTOCOL_VERSION, __version__
from sidemirror.core.hub import (
    EphemeralPublished,
    ItemsPublished,
    LogReset,
    Resync,
    SessionSwitched,
    StateChanged,
    Subscriber,
    session_topic,
    workspace_topic,
)
from sidemirror.core.store import SessionLog
from sidemirror.core.views import dumps, snapshot_json
from sidemirror.web.bodies import parse_limit
from sidemirror.web.security import ticket_ok
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.sse import event_stream, item_frame, last_event_id
from sidemirror.web.state import APP_STATE, AppState

SEND_BATCH = 256  # items per write when a client has several waiting


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
        await self.resp.send(dumps(hello), event="hello")

    def take_snapshot(self) -> tuple[str, str | None]:
        """Synchronously: the snapshot message and its id; marks its items as sent."""
        log = self.log
        self.sent = len(log.items)
        return snapshot_json(self.state.store, log, self.limit, type="snapshot"), log.cursor

    async def send_snapshot(self, data_and_id: tuple[str, str | None]) -> None:
        data, cursor = data_and_id
        await self.resp.send(data, id=cursor, event="snapshot")

    async def send_reset(self, reason: str) -> None:
        await self.resp.send(
            dumps({"type": "reset", "reason": reason, "epoch": self.log.epoch}), event="reset"
        )

    async def send_status(self, state: str, reason: str | None, exact: bool) -> None:
        data: dict[str, object] = {
            "type": "session_status",
            "state": state,
            "session": self.log.session_id,
        }
        if reason is not None:
            data["reason"] = reason
        data["exact"] = exact
        await self.resp.send(dumps(data), event="session_status")

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
            frames = "".join(item_frame(*store.item_and_wire(log, i)) for i in range(start, end))
            await self.resp.write(frames.encode("utf-8"))


@ticket_ok
async def session_stream(request: web.Request) -> web.StreamResponse:
    state = request.app[APP_STATE]
    store, hub = state.store, state.hub
    ws = workspace_of(request)
    follow = "session" not in request.query
    log = session_of(ws, request.query.get("session"))
    limit = parse_limit(request, state.settings.snapshot_limit)
    last_id = last_event_id(request)
    await store.load(log)

    async with event_stream(request) as resp:
        sub = hub.subscribe(
            workspace_topic(ws.id) if follow else session_topic(ws.id, log.session_id)
        )
        try:
            stream = _Stream(state, resp, log, limit)
            # Synchronous from subscribing to here: decide what to send first.
            resume = log.resume_point(last_id) if last_id else None
            snapshot: tuple[str, str | None] | None = None
            if resume is not None:
                stream.sent = resume  # exact replay: send_new_items sends what follows it
            else:
                snapshot = stream.take_snapshot()
            await stream.hello()
            if snapshot is not None:
                if last_id:
                    await stream.send_reset("unknown_or_stale_id")
                await stream.send_snapshot(snapshot)
            await stream.send_new_items()
            if log.state_reason is not None:  # e.g. its file is gone: say so on every connect
                await stream.send_status(log.state, log.state_reason, log.state_exact)
            await _pump(stream, sub, follow, state)
        finally:
            hub.unsubscribe(sub)
    return resp


async def _pump(stream: _Stream, sub: Subscriber, follow: bool, state: AppState) -> None:
    store = state.store
    while True:
        message = await sub.get()
        log = stream.log
        if isinstance(message, ItemsPublished):
            if message.session_id == log.session_id:
                await stream.send_new_items()  # the whole batch (and any before it), one write
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
                await stream.send_status(message.state, message.reason, message.exact)
        elif isinstance(message, SessionSwitched) and follow:
            ws = store.workspace(log.workspace_id)
            new_log = ws.sessions.get(message.session_id) if ws else None
            if new_log is None or new_log is log:
                continue
            await store.load(new_log)
            stream.log = new_log
            snapshot = stream.take_snapshot()
            await stream.send_status(new_log.state, new_log.state_reason, new_log.state_exact)
            await stream.send_snapshot(snapshot)
