"""`POST /api/decisions/batch` `{"workspace", "session", "ids": [...], "behavior": "allow"}`:
allow the listed requests of one session (attention/batch.py).

`@panel`, as a single decision: only the paired extension can approve. The answer is
`{"results": [{"id", "result", "outcome"?}]}`, one per id; a request that closed meanwhile is
reported (`already_answered` with its real `outcome`), never answered again.
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.batch import MAX_BATCH, allow_all
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import panel


@panel
async def decide_batch(request: web.Request) -> web.Response:
    body = await read_json(request)
    if not isinstance(body, dict) or body.get("behavior") != "allow":
        return error_response(400, "bad_batch", 'a batch allows: behavior must be "allow"')
    workspace, session, ids = body.get("workspace"), body.get("session"), body.get("ids")
    if not isinstance(workspace, str) or not isinstance(session, str):
        return error_response(400, "bad_batch", "workspace and session are strings")
    if (
        not isinstance(ids, list)
        or not 0 < len(ids) <= MAX_BATCH
        or not all(isinstance(i, str) for i in ids)
    ):
        return error_response(400, "bad_batch", f"ids lists 1 to {MAX_BATCH} request ids")
    results = allow_all(request.app[ATTENTION].decisions, workspace, session, ids)
    return web.json_response({"results": results})
