"""The one-time code fallback of pairing: `POST /api/pair/code` and `POST /api/pair`.

The extension pairs over Chrome native messaging (native_host/), a channel only the browser
can open. Where that host is not installed, the user pairs with a code: `sidemirror pair`
(which holds the token and reads the panel credential from the data dir) fetches a short code
from `POST /api/pair/code` and prints it; the user types it into the popup, which sends it to
`POST /api/pair` as `{"code": "..."}` and receives the token and the panel credential.

No answer here hands out anything without the code: a connection that merely passes the
OS-owner check proves nothing, since any same-user relay (ssh -R, socat) passes it too, and an
Origin header is a string any process can send. Minting a code needs the panel credential, so a
process that holds only the runtime-file token cannot pair itself into a panel.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

from aiohttp import web

from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.identify import SERVER_ID
from sidemirror.web.security import pairing, panel
from sidemirror.web.state import APP_STATE

CODE_TTL_S = 300
# No 0/O, 1/I/L: the user copies the code by eye. 31**6 ≈ 8.9e8 codes.
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_CHARS = 6
# Wrong guesses allowed before every live code is void (the user asks for a new one).
MAX_FAILURES = 5


@dataclass
class PairingCodes:
    """Single-use codes, valid `ttl_s`; a few wrong guesses void them all, so guessing one
    (1 in 8.9e8 per try) is hopeless."""

    ttl_s: float = CODE_TTL_S
    _live: dict[str, float] = field(default_factory=dict)
    _failures: int = 0

    def issue(self) -> str:
        now = time.monotonic()
        self._live = {c: exp for c, exp in self._live.items() if exp > now}
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_CHARS))
        self._live[code] = now + self.ttl_s
        self._failures = 0
        return f"{code[:3]}-{code[3:]}"

    def redeem(self, typed: str) -> bool:
        code = "".join(ch for ch in typed.upper() if ch.isalnum())
        now = time.monotonic()
        # compare_digest against each live code: no timing hint about which one is close.
        match = next(
            (c for c, exp in self._live.items() if exp > now and hmac.compare_digest(c, code)),
            None,
        )
        if match is not None:
            del self._live[match]
            return True
        self._failures += 1
        if self._failures >= MAX_FAILURES:
            self._live.clear()
        return False


PAIRING_CODES = web.AppKey("pairing_codes", PairingCodes)


@pairing
async def pair(request: web.Request) -> web.Response:
    # The middleware has checked the Host is loopback, the Origin an allowed extension, and
    # that the connection is not another OS user's. None of that is proof: the code is.
    refused = await _check_code(request)
    if refused is not None:
        return refused
    guard = request.app[APP_STATE].guard
    return web.json_response(
        {
            "token": guard.token,
            "panel": guard.panel_credential,
            "server_id": request.app[SERVER_ID],
        }
    )


async def _check_code(request: web.Request) -> web.Response | None:
    body = await read_json(request) if request.body_exists else None
    code = body.get("code") if isinstance(body, dict) else None
    if not isinstance(code, str) or not code:
        return error_response(
            403, "pairing_code_required",
            "pairing without the browser's native messaging host needs a code: run "
            '`sidemirror pair` and send the code it prints as {"code": "..."}',
        )  # fmt: skip
    if not request.app[PAIRING_CODES].redeem(code):
        return error_response(
            403, "wrong_pairing_code",
            "that pairing code is wrong or expired; run `sidemirror pair` for a new one",
        )  # fmt: skip
    return None


@panel
async def pair_code(request: web.Request) -> web.Response:
    codes = request.app[PAIRING_CODES]
    return web.json_response({"code": codes.issue(), "expires_in": int(codes.ttl_s)})
