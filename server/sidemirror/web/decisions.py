"""Decisions on held permission requests (attention/decisions.py).

- `GET /api/decisions`: the pending requests, oldest first, each with its tool and full
  (redacted) input.
- `POST /api/decisions/{request_id}` `{"behavior": "allow"|"deny", "message"}`: answer one. It
  is `@panel`: it needs the token and the panel credential, which only the paired extension
  holds (panel_credential.py), so a process with the runtime-file token, whatever Origin it
  sends, cannot approve what the agent runs. An id that is not pending is refused (404 never
  issued, 409 already answered: a replayed decision changes nothing).
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.decisions import AlreadyAnswered, Answer
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import panel

MESSAGE_CHARS = 2000


async def list_decisions(request: web.Request) -> web.Response:
    return web.json_response({"decisions": request.app[ATTENTION].decisions.listing()})


@panel
async def decide(request: web.Request) -> web.Response:
    # The middleware has checked the token and the panel credential.
    body = await read_json(request)
    behavior = body.get("behavior") if isinstance(body, dict) else None
    if behavior not in ("allow", "deny"):
        return error_response(400, "bad_decision", 'behavior must be "allow" or "deny"')
    message = body.get("message") or ""
    if not isinstance(message, str):
        return error_response(400, "bad_decision", "message must be a string")
    request_id = request.match_info["request_id"]
    try:
        pending = request.app[ATTENTION].decisions.answer(
            request_id, Answer(behavior, "panel", message[:MESSAGE_CHARS])
        )
    except AlreadyAnswered:
        return error_response(409, "already_answered", "this request was already answered")
    except KeyError:
        return error_response(404, "unknown_request", "no pending request has this id")
    return web.json_response({"id": pending.id, "behavior": behavior})
