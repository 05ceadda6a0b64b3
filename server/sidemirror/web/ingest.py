"""Pushed sessions over HTTP: `POST /api/ingest` (NDJSON) and `GET /api/ingest/ws` (one JSON
record per text frame). Each record goes through an `IngestRun` (ingest/run.py)."""

from __future__ import annotations

from aiohttp import WSMsgType, web

from sidemirror.core.store import resolve_workspace
from sidemirror.ingest.run import IngestRun
from sidemirror.web.bodies import NDJSON_LIMIT, WS_FRAME_LIMIT, require_ndjson
from sidemirror.web.state import APP_STATE


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


async def ingest_ndjson(request: web.Request) -> web.Response:
    require_ndjson(request)
    run = _run_from_query(request)
    received = 0
    pending: list[bytes] = []  # pieces of a line not yet ended (joined once: no quadratic copy)
    # Lines are applied as they arrive, so a live pipe shows up in the panel immediately. Split by
    # hand: StreamReader.readline() refuses lines over 128 KiB, and tool outputs are often longer.
    async for chunk in request.content.iter_any():
        received += len(chunk)
        if received > NDJSON_LIMIT:
            raise web.HTTPRequestEntityTooLarge(max_size=NDJSON_LIMIT, actual_size=received)
        if b"\n" not in chunk:
            pending.append(chunk)
            continue
        first, *lines, rest = chunk.split(b"\n")
        run.feed_line(b"".join([*pending, first]))
        for line in lines:
            run.feed_line(line)
        pending = [rest]
    run.feed_line(b"".join(pending))  # a last line without its newline still counts
    run.finish()
    return web.json_response(run.result())


async def ingest_ws(request: web.Request) -> web.WebSocketResponse:
    run = _run_from_query(request)  # validated before the upgrade answers 101
    ws = web.WebSocketResponse(max_msg_size=WS_FRAME_LIMIT, heartbeat=30)
    await ws.prepare(request)
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            for line in msg.data.splitlines():
                run.feed_line(line)
            # Running totals double as an acknowledgement the sender can wait for.
            await ws.send_json(run.result())
        elif msg.type == WSMsgType.BINARY:
            await ws.close(message=b"text frames only")
    run.finish()
    return ws
