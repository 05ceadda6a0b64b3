"""JSON reads of workspaces, sessions, snapshots and single items (DESIGN §2)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from sidemirror.core.projection import full_dict
from sidemirror.core.store import SessionLog, Store, Workspace
from sidemirror.web.session_stream import parse_limit, session_stream
from sidemirror.web.state import APP_STATE

routes = web.RouteTableDef()


def iso(ts: float) -> str | None:
    if ts <= 0:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


def _workspace(request: web.Request) -> Workspace:
    ws = request.app[APP_STATE].store.workspace(request.match_info["ws"])
    if ws is None:
        raise web.HTTPNotFound(text=f"unknown workspace {request.match_info['ws']!r}")
    return ws


def _session(ws: Workspace, session_id: str | None) -> SessionLog:
    log = ws.latest_session() if session_id is None else ws.sessions.get(session_id)
    if log is None:
        raise web.HTTPNotFound(text=f"unknown session {session_id!r} in workspace {ws.id}")
    return log


def session_summary(log: SessionLog) -> dict[str, Any]:
    return {
        "id": log.session_id,
        "agent": log.agent,
        "title": log.title,
        "started_at": log.started_at,
        "last_activity": iso(log.last_activity),
        "active": log.state in ("running", "waiting"),
        # null until the session is first read: indexing never parses archived transcripts.
        "items": len(log.items) if log.loader is None else None,
    }


def workspace_summary(ws: Workspace) -> dict[str, Any]:
    return {
        "id": ws.id,
        "name": ws.name,
        "branch": ws.branch,
        "directory": ws.directory,
        "pid": ws.pid,
        "active": ws.active,
        "agent": ws.agent,
        "last_activity": iso(ws.last_activity),
        "sessions": len(ws.sessions),
    }


@routes.get("/api/workspaces")
async def list_workspaces(request: web.Request) -> web.Response:
    store = request.app[APP_STATE].store
    return web.json_response(
        {"workspaces": [workspace_summary(ws) for ws in store.workspaces_by_activity()]}
    )


@routes.get("/workspace/{ws}/sessions")
async def list_sessions(request: web.Request) -> web.Response:
    ws = _workspace(request)
    logs = sorted(ws.sessions.values(), key=lambda s: s.last_activity, reverse=True)
    return web.json_response({"sessions": [session_summary(log) for log in logs]})


@routes.get("/workspace/{ws}/session")
async def snapshot(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    ws = _workspace(request)
    log = _session(ws, request.query.get("session"))
    limit = parse_limit(request, state.settings.snapshot_limit)
    await state.store.load(log)
    body = snapshot_json(state.store, ws, log, limit)
    return web.Response(text=body, content_type="application/json")


def snapshot_json(store: Store, ws: Workspace, log: SessionLog, limit: int) -> str:
    total = len(log.items)
    items = ",".join(store.iter_wire(log, max(0, total - limit), total))
    head = json.dumps(
        {
            "epoch": log.epoch,
            "workspace": ws.id,
            "session": log.session_id,
            "cursor": log.cursor,
            "total": total,
            "skipped_bytes": log.skipped_bytes,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return head[:-1] + ',"items":[' + items + "]}"


@routes.get("/workspace/{ws}/session/items/{item_id}")
async def full_item(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    ws = _workspace(request)
    item_id = request.match_info["item_id"]
    wanted = request.query.get("session")
    candidates = [_session(ws, wanted)] if wanted else list(ws.sessions.values())
    for log in candidates:
        if not item_id.startswith(log.epoch + "."):
            continue
        await state.store.load(log)
        item = log.item(item_id)
        if item is not None:
            return web.json_response(full_dict(item))
    raise web.HTTPNotFound(text=f"unknown item {item_id!r} in workspace {ws.id}")


routes.get("/workspace/{ws}/session/stream")(session_stream)
