"""One server identity: the `server_id` (kept in the data dir: web/about.py) and
`GET /api/identify`.

`/health` tells anyone which server answers (`server_id`); `/api/identify` lets a client that
holds the token check, before sending it, that this server holds the same token: it sends a
fresh nonce and compares the proof with its own HMAC. A decoy on the port range can copy a
`server_id` but cannot compute the proof without the token.

    proof = hex(HMAC-SHA256(key = token (UTF-8),
                            msg = "sidemirror-identify:" + server_id + ":" + nonce))
"""

from __future__ import annotations

import re

from aiohttp import web

from sidemirror.server_check import identity_proof
from sidemirror.web.bodies import error_response
from sidemirror.web.security import public
from sidemirror.web.state import APP_STATE

_NONCE = re.compile(r"[0-9a-fA-F]{32,128}")

SERVER_ID = web.AppKey("server_id", str)


@public
async def identify(request: web.Request) -> web.Response:
    nonce = request.query.get("nonce", "")
    if not _NONCE.fullmatch(nonce):
        return error_response(
            400, "bad_nonce", f"nonce must be 32 to 128 hex digits, got {len(nonce)} characters"
        )
    server_id = request.app[SERVER_ID]
    token = request.app[APP_STATE].guard.token
    return web.json_response(
        {"server_id": server_id, "proof": identity_proof(token, server_id, nonce)}
    )
