"""`POST /api/statusline/claude` (a status line report: the JSON Claude Code gives its status
line command, sent by `sidemirror statusline run`) and `GET /api/statusline/claude?session=SID`
(the latest figures of that session, for the panel's gauge). Token, both: reporting and reading
are what the token is for (docs/security.md)."""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.agent_figures import AgentFigures, figures_from_statusline
from sidemirror.web.bodies import error_response, read_json

AGENT_FIGURES = web.AppKey("agent_figures", AgentFigures)


async def report_statusline(request: web.Request) -> web.Response:
    try:
        figures = figures_from_statusline(await read_json(request))
    except ValueError as exc:
        return error_response(400, "bad_statusline_report", str(exc))
    request.app[AGENT_FIGURES].put(figures)
    return web.json_response({"accepted": True})


async def statusline_figures(request: web.Request) -> web.Response:
    session = request.query.get("session", "")
    if not session:
        return error_response(400, "bad_parameter", "session is required")
    return web.json_response({"figures": request.app[AGENT_FIGURES].get(session)})
