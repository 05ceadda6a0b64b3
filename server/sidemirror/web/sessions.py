"""JSON reads of workspaces, sessions, snapshots and single items."""

from __future__ import annotations

from aiohttp import web

from sidemirror.core.history import item_at
from sidemirror.core.projection import full_dict
from sidemirror.core.store import SessionLog, Workspace
from sidemirror.core.views import session_summary, snapshot_json, workspace_summary
from sidemirror.web.bodies import parse_limit
from sidemirror.web.history import history_page, later_page
from sidemirror.web.state import APP_STATE


def workspace_of(request: web.Request) -> Workspace:
    ws = request.app[APP_STATE].store.workspace(request.match_info["ws"])
    if ws is None:
        raise web.HTTPNotFound(text=f"unknown workspace {request.match_info['ws']!r}")
    return ws


def session_of(ws: Workspace, session_id: str | None) -> SessionLog:
    """The named session, or the workspace's latest when none is named."""
    log = ws.latest_session() if session_id is None else ws.sessions.get(session_id)
    if log is None:
        raise web.HTTPNotFound(text=f"unknown session {session_id!r} in workspace {ws.id}")
    return log


async def list_workspaces(request: web.Request) -> web.Response:
    store = request.app[APP_STATE].store
    return web.json_response(
        {"workspaces": [workspace_summary(ws) for ws in store.workspaces_by_activity()]}
    )


async def list_sessions(request: web.Request) -> web.Response:
    ws = workspace_of(request)
    logs = sorted(ws.sessions.values(), key=lambda s: s.last_activity, reverse=True)
    return web.json_response({"sessions": [session_summary(log) for log in logs]})


async def list_all_sessions(request: web.Request) -> web.Response:
    """Every workspace and every session of each, in one answer: the panel's session list
    shows them all, and one request per workspace was hundreds for a big archive."""
    store = request.app[APP_STATE].store
    workspaces = store.workspaces_by_activity()
    listed = []
    for ws in workspaces:
        logs = sorted(ws.sessions.values(), key=lambda s: s.last_activity, reverse=True)
        listed += [{**session_summary(log), "workspace": ws.id} for log in logs]
    return web.json_response(
        {"workspaces": [workspace_summary(ws) for ws in workspaces], "sessions": listed}
    )


async def snapshot(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    log = session_of(workspace_of(request), request.query.get("session"))
    limit = parse_limit(request, state.settings.snapshot_limit)
    await state.store.load(log)
    before, after, start = (request.query.get(k) for k in ("before", "after", "from"))
    if sum(v is not None for v in (before, after, start)) > 1:
        raise web.HTTPBadRequest(text="give at most one of before=, after= and from=")
    if start is not None and start != "start":
        raise web.HTTPBadRequest(text=f"from= takes only 'start', got {start!r}")
    if before is not None:  # reading back (history)
        return await history_page(state.store, log, before, limit)
    if after is not None or start is not None:  # from the start on
        return await later_page(state.store, log, after, limit)
    body = snapshot_json(state.store, log, limit)
    return web.Response(text=body, content_type="application/json")


async def full_item(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    ws = workspace_of(request)
    item_id = request.match_info["item_id"]
    wanted = request.query.get("session")
    candidates = [session_of(ws, wanted)] if wanted else list(ws.sessions.values())
    for log in candidates:
        if wanted:  # a session not read yet has no epoch until it is (a search hit's session)
            await state.store.load(log)
        if not item_id.startswith(log.epoch + "."):
            continue
        await state.store.load(log)
        item = await item_at(state.store, log, item_id)
        if item is not None:
            return web.json_response(full_dict(item))
    raise web.HTTPNotFound(text=f"unknown item {item_id!r} in workspace {ws.id}")
