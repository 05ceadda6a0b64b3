"""HTTP side of browser-link (docs/api.md).

- `GET /workspace/{ws}/session/items/{item_id}/activity[?session=SID]`: the activity entries
  linked to a tool call (its `tool_use` item, or its `tool_result`), oldest first, with the
  call's window and a summary (where the page went, errors seen) for its card.
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.activity.browser_events import summarize
from sidemirror.activity.calls import iso
from sidemirror.activity.links import BrowserLinks
from sidemirror.core.models import SessionItem
from sidemirror.core.store import SessionLog, Workspace
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.state import APP_STATE

BROWSER_LINKS = web.AppKey("browser_links", BrowserLinks)


async def _find_item(
    request: web.Request, ws: Workspace, item_id: str
) -> tuple[SessionLog, SessionItem]:
    store = request.app[APP_STATE].store
    wanted = request.query.get("session")
    candidates = [session_of(ws, wanted)] if wanted else list(ws.sessions.values())
    for log in candidates:
        if not item_id.startswith(log.epoch + "."):
            continue
        await store.load(log)
        item = log.item(item_id)
        if item is not None:
            return log, item
    raise web.HTTPNotFound(text=f"unknown item {item_id!r} in workspace {ws.id}")


async def call_activity(request: web.Request) -> web.Response:
    ws = workspace_of(request)
    item_id = request.match_info["item_id"]
    log, item = await _find_item(request, ws, item_id)
    tool_use_id = getattr(item, "tool_use_id", None)
    if item.type not in ("tool_use", "tool_result") or not isinstance(tool_use_id, str):
        raise web.HTTPNotFound(text=f"item {item_id!r} is not a tool call (it is {item.type})")
    call, entries = await request.app[BROWSER_LINKS].entries_of_call(ws, log, tool_use_id)
    return web.json_response(
        {
            "workspace": ws.id,
            "tool_use_id": tool_use_id,
            "item_id": None if call is None else call.item_id,
            "session": None if call is None else call.session,
            "name": None if call is None else call.name,
            "label": None if call is None else call.label,
            "turn": None if call is None else call.turn,
            "browser": call is not None and (call.browser or bool(entries)),
            "window": None
            if call is None
            else {
                "start": iso(call.start),
                "end": None if call.end is None else iso(call.end),
            },
            "summary": summarize(entries),
            "entries": [e.model_dump(mode="json") for e in entries],
        }
    )
