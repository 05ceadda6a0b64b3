"""Pushed sessions over HTTP: `POST /api/ingest` (NDJSON) and `GET /api/ingest/ws` (one JSON
record per text frame). Each record goes through an `IngestRun` (ingest/run.py).

A request is acknowledged once what it stored is durable. When the disk refuses a line the
answer is 507 `disk_full` with the counts so far and `first_unstored_line` (in the error and at
the top level), the 0-based index of the first line not stored (lines of a WebSocket count from
its first frame): a client resends from there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from sidemirror.core.store import resolve_workspace
from sidemirror.ingest.run import IngestRun, NotStored
from sidemirror.web.bodies import NDJSON_LIMIT, WS_FRAME_LIMIT, require_ndjson
from sidemirror.web.state import APP_STATE

INSUFFICIENT_STORAGE = 507


def _run_from_query(request: web.Request) -> IngestRun:
    workspace = request.query.get("workspace", "").rstrip("/")
    if not workspace:
        raise web.HTTPBadRequest(text="query parameter 'workspace' (a directory) is required")
    state = request.app[APP_STATE]
    ref = resolve_workspace(workspace)
    known = state.store.workspace(ref.id) if ref.directory is None else None
    if known is not None:  # named by id: ingest into that workspace's directory
        workspace = known.directory
    fmt = request.query.get("format", "events")
    try:
        return IngestRun(state.store, state.journal, workspace, fmt, request.query.get("session"))
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None


def _not_stored(run: IngestRun, exc: NotStored) -> dict[str, Any]:
    # `first_unstored_line` inside the error (every write path's 507 shape, docs/api.md) and
    # at the top level, where clients of the first 507 read it.
    first = exc.first_unstored_line
    return {**exc.error.body(first), **run.result(), "first_unstored_line": first}


async def _body_lines(request: web.Request) -> AsyncIterator[list[bytes]]:
    """The body's lines as they arrive, a chunk's worth at a time (the last one may lack its
    newline). Split by hand: StreamReader.readline() refuses lines over 128 KiB, and tool
    outputs are often longer."""
    received = 0
    pending: list[bytes] = []  # pieces of a line not yet ended (joined once: no quadratic copy)
    async for chunk in request.content.iter_any():
        received += len(chunk)
        if received > NDJSON_LIMIT:
            raise web.HTTPRequestEntityTooLarge(max_size=NDJSON_LIMIT, actual_size=received)
        if b"\n" not in chunk:
            pending.append(chunk)
            continue
        first, *lines, rest = chunk.split(b"\n")
        yield [b"".join([*pending, first]), *lines]
        pending = [rest]
    yield [b"".join(pending)]


async def ingest_ndjson(request: web.Request) -> web.Response:
    require_ndjson(request)
    run = _run_from_query(request)
    try:
        # Lines are applied as they arrive, so a live pipe shows up in the panel immediately.
        async for lines in _body_lines(request):
            await run.feed(lines)
        await run.finish()
    except NotStored as exc:
        refused = await run.settle(exc)
        return web.json_response(_not_stored(run, refused), status=INSUFFICIENT_STORAGE)
    return web.json_response(run.result())


async def ingest_ws(request: web.Request) -> web.WebSocketResponse:
    run = _run_from_query(request)  # validated before the upgrade answers 101
    ws = web.WebSocketResponse(max_msg_size=WS_FRAME_LIMIT, heartbeat=30)
    await ws.prepare(request)
    try:
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                await run.feed(msg.data.splitlines())
                await run.sync()
                # Running totals double as an acknowledgement the sender can wait for.
                await ws.send_json(run.result())
            elif msg.type == WSMsgType.BINARY:
                await ws.close(message=b"text frames only")
        await run.finish()
    except NotStored as exc:
        refused = await run.settle(exc)
        if not ws.closed:
            await ws.send_json(_not_stored(run, refused))
            await ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"insufficient storage")
    return ws
