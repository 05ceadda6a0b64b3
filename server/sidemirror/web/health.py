"""Who this server is, and how a client gets in: `/health`, `/api/identify`, `/api/pair`,
`/api/ticket`.

`server_id` names this server across restarts (kept in the data dir); `/api/identify` lets a
client that holds the token check that this server holds the same one before sending it:

    proof = hex(HMAC-SHA256(key = token (UTF-8),
                            msg = "sidemirror-identify:" + server_id + ":" + nonce))
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from pathlib import Path

from aiohttp import web

from sidemirror import __version__
from sidemirror.core.models import PROTOCOL_VERSION
from sidemirror.web.bodies import error_response
from sidemirror.web.security import pairing, public
from sidemirror.web.state import APP_STATE

SERVER_ID = web.AppKey("server_id", str)
SERVER_ID_FILE = "server_id"
PROOF_PREFIX = "sidemirror-identify:"
_SERVER_ID_RE = re.compile(r"[0-9a-f]{32}")
_NONCE_RE = re.compile(r"[0-9a-fA-F]{32,128}")


def load_server_id(data_dir: Path) -> str:
    """The data dir's server id (128 random bits, hex): made the first time, then kept (0600)."""
    path = data_dir / SERVER_ID_FILE
    try:
        existing = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        existing = ""
    if _SERVER_ID_RE.fullmatch(existing):
        return existing
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    new = secrets.token_hex(16)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(new + "\n")
    return new


def identity_proof(token: str, server_id: str, nonce: str) -> str:
    message = f"{PROOF_PREFIX}{server_id}:{nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


@public
async def health(request: web.Request) -> web.Response:
    # Never a token here: anything on this machine may read /health.
    state = request.app[APP_STATE]
    return web.json_response(
        {
            "app": "sidemirror",
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "status": "ok",
            "server_id": request.app[SERVER_ID],
            "instance": state.instance,
            "uptime_s": round(time.monotonic() - state.started, 3),
            "workspaces": len(state.store.workspaces),
            "parse_errors": state.store.parse_errors,
        }
    )


@public
async def identify(request: web.Request) -> web.Response:
    nonce = request.query.get("nonce", "")
    if not _NONCE_RE.fullmatch(nonce):
        return error_response(
            400, "bad_nonce", f"nonce must be 32 to 128 hex digits, got {len(nonce)} characters"
        )
    server_id = request.app[SERVER_ID]
    proof = identity_proof(request.app[APP_STATE].guard.token, server_id, nonce)
    return web.json_response({"server_id": server_id, "proof": proof})


@pairing
async def pair(request: web.Request) -> web.Response:
    # The middleware has checked the Origin is an allowed extension and the Host is loopback.
    return web.json_response({"token": request.app[APP_STATE].guard.token})


async def ticket(request: web.Request) -> web.Response:
    tickets = request.app[APP_STATE].guard.tickets
    return web.json_response({"ticket": tickets.issue(), "expires_in": int(tickets.ttl_s)})
