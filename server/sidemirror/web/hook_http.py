"""`POST /api/hooks/claude/http`: a Claude Code hook event posted by Claude Code itself, from an
HTTP hook (`"type": "http"`) that `sidemirror hooks install --transport http` wrote.

No process starts per tool call: Claude Code sends the event's JSON as the body, as a command
hook would read it on stdin, and takes the answer's body as the hook's output (hooks reference,
"HTTP hook fields" and "HTTP response handling"): the same output `sidemirror hook` would print
(web/hooks.py `answer_event`), or `{}` when there is nothing to say.

It takes only the hook secret (`X-Sidemirror-Hook`, hook_secret.py), and that secret opens
nothing else. A `PermissionRequest` is refused here (400, so Claude Code carries on and the
terminal asks): deciding stays with the command hook, which checks that the listener is our
server before it believes an answer (docs/security.md, "HTTP hooks").
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.hook_events import parse_event
from sidemirror.hook_secret import COMMAND_ONLY_EVENTS
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.hooks import answer_event
from sidemirror.web.security import hook_post


@hook_post
async def claude_http_hook(request: web.Request) -> web.Response:
    try:
        event = parse_event(await read_json(request))
    except ValueError as exc:
        return error_response(400, "bad_hook_event", str(exc))
    if event.name in COMMAND_ONLY_EVENTS:
        return error_response(
            400,
            "command_hook_only",
            f"{event.name} is answered through the command hook (`sidemirror hook`), which "
            "checks the server before it trusts an answer; the terminal asks as usual",
        )
    output = await answer_event(request.app, event)
    return web.json_response(output or {})
