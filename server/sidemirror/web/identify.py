"""One server identity: the `server_id` kept in the data dir, and `GET /api/identify`.

`/health` tells anyone which server answers (`server_id`); `/api/identify` lets a client that
holds the token check, before sending it, that this server holds the same token: it sends a
fresh nonce and compares the proof with its own HMAC. A decoy on the port range can copy a
`server_id` but cannot compute the proof without the token.

    proof = hex(HMAC-SHA256(key = token (UTF-8),
                            msg = "sidemirror-identify:" + server_id + ":" + nonce))
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from pathlib import Path

from aiohttp import web

from sidemirror.core.private import private_dir, write_private
from sidemirror.web.bodies import error_response
from sidemirror.web.security import public
from sidemirror.web.state import APP_STATE

SERVER_ID_FILE = "server_id"
PROOF_PREFIX = "sidemirror-identify:"
_SERVER_ID = re.compile(r"[0-9a-f]{32}")
_NONCE = re.compile(r"[0-9a-fA-F]{32,128}")

SERVER_ID = web.AppKey("server_id", str)


def load_server_id(data_dir: Path) -> str:
    """The data dir's server id (128 random bits, hex), made the first time and kept (0600)."""
    path = data_dir / SERVER_ID_FILE
    try:
        existing = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        existing = ""
    if _SERVER_ID.fullmatch(existing):
        return existing
    private_dir(data_dir)
    new = secrets.token_hex(16)
    try:
        write_private(path, new + "\n", exclusive=not path.exists())
    except FileExistsError:  # another server on this data dir made it first: use theirs
        return load_server_id(data_dir)
    return new


def identity_proof(token: str, server_id: str, nonce: str) -> str:
    message = f"{PROOF_PREFIX}{server_id}:{nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


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
