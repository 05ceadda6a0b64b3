"""Localhost is not a trust boundary: the owner, Host, Origin, token and ticket rules
(docs/security.md).

Every request passes `security_middleware` before any handler runs. Handlers declare how they
authenticate with `@public`, `@pairing`, `@ticket_ok`, `@panel` or `@hook_post`; everything else
needs the token. `@panel` marks a route that acts for the user (deciding, answering, sending
notes): it needs the token and the panel credential (panel_credential.py), which only the
extension holds.
An Origin header proves nothing: any process can send one.
Every response, errors included, leaves with the same cache and sniffing headers
(`security_headers`, run as each response is prepared).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from aiohttp import web
from aiohttp.typedefs import Middleware

from sidemirror.hook_secret import HOOK_HEADER
from sidemirror.panel_credential import PANEL_HEADER
from sidemirror.web.bodies import error_response
from sidemirror.web.peer import Owner, OwnerCache
from sidemirror.web.rules import PREFLIGHT_HEADERS, SECURITY_HEADERS, cors_headers, host_allowed

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
H = TypeVar("H", bound=Handler)
Auth = Literal["public", "pairing", "token", "ticket_ok", "panel", "hook"]

TICKET_TTL_S = 60
_AUTH_ATTR = "_sidemirror_auth"
# Who owns the request's connection (web/peer.py), for handlers that decide by it (pairing).
OWNER = web.RequestKey("sidemirror_owner", Owner)


def _mark(auth: Auth) -> Callable[[H], H]:
    def wrap(handler: H) -> H:
        setattr(handler, _AUTH_ATTR, auth)
        return handler

    return wrap


public = _mark("public")
pairing = _mark("pairing")
ticket_ok = _mark("ticket_ok")
# The token and the panel credential (`X-Sidemirror-Panel`): put `@panel` on any handler that
# decides, answers or sends notes for the user.
panel = _mark("panel")
# Only the hook secret (`X-Sidemirror-Hook`, hook_secret.py), which Claude Code's HTTP hooks send:
# the one route that takes it takes nothing else, and no other route takes it.
hook_post = _mark("hook")


@dataclass
class Tickets:
    """Single-use, short-lived credentials for EventSource URLs (which cannot send headers)."""

    ttl_s: float = TICKET_TTL_S
    _live: dict[str, float] = field(default_factory=dict)

    def issue(self) -> str:
        now = time.monotonic()
        self._live = {t: exp for t, exp in self._live.items() if exp > now}
        ticket = secrets.token_urlsafe(24)
        self._live[ticket] = now + self.ttl_s
        return ticket

    def redeem(self, ticket: str) -> bool:
        expires = self._live.pop(ticket, None)
        return expires is not None and expires > time.monotonic()


@dataclass(frozen=True)
class Guard:
    token: str
    panel_credential: str
    allowed_origins: frozenset[str]
    tickets: Tickets
    extra_hosts: frozenset[str] = frozenset()
    owners: OwnerCache = field(default_factory=lambda: OwnerCache(enabled=True))
    hook_secret: str = ""  # empty: no HTTP hook is accepted

    def host_allowed(self, host_header: str | None, port: int) -> bool:
        return host_allowed(host_header, port, self.extra_hosts)

    def token_ok(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value:
            return False
        try:
            sent = value.strip().encode()
        except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
            return False
        return hmac.compare_digest(sent, self.token.encode())

    def panel_ok(self, request: web.Request) -> bool:
        try:
            sent = request.headers.get(PANEL_HEADER, "").strip().encode()
        except UnicodeEncodeError:
            return False
        return bool(sent) and hmac.compare_digest(sent, self.panel_credential.encode())

    def hook_ok(self, request: web.Request) -> bool:
        try:
            sent = request.headers.get(HOOK_HEADER, "").strip().encode()
        except UnicodeEncodeError:
            return False
        secret = self.hook_secret.encode()
        return bool(sent) and bool(secret) and hmac.compare_digest(sent, secret)


def _local_port(request: web.Request) -> int:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return int(sockname[1])
    return -1


def security_middleware(guard: Guard) -> Middleware:
    """The checks every request passes before any handler runs, in this order: the connection's
    OS user (403), Host (421), Origin (403), then the handler's own rule (token, ticket, panel,
    pairing or public; 401/403)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        return await _checked(guard, request, handler)

    return check


async def _checked(guard: Guard, request: web.Request, handler: Handler) -> web.StreamResponse:
    owner = await guard.owners.owner(request.transport)
    if owner is Owner.OTHER:
        refused = error_response(
            403, "other_user", "this connection belongs to another OS user than the server's"
        )
        # `Connection: close`, and closed once answered: kept alive, another user's refused
        # connections would hold the room the owner's clients need (web/connections.py).
        refused.force_close()
        return refused
    request[OWNER] = owner
    if not guard.host_allowed(request.headers.get("Host"), _local_port(request)):
        return error_response(421, "misdirected_request", "Host header is not this server")
    origin = request.headers.get("Origin")
    if origin is not None and origin not in guard.allowed_origins:
        return error_response(403, "forbidden_origin", f"Origin {origin!r} is not allowed")
    if request.method == "OPTIONS" and origin is not None:
        return web.Response(status=204, headers={**cors_headers(origin), **PREFLIGHT_HEADERS})
    route_handler = request.match_info.handler
    auth: Auth = getattr(route_handler, _AUTH_ATTR, "token")
    if auth == "pairing" and origin is None:
        return error_response(403, "forbidden_origin", "pairing needs an extension Origin")
    if auth == "hook" and not guard.hook_ok(request):
        return error_response(401, "unauthorized", "missing or wrong hook secret")
    if auth in ("token", "ticket_ok", "panel") and not guard.token_ok(request):
        ticket = request.query.get("ticket")
        if not (auth == "ticket_ok" and ticket and guard.tickets.redeem(ticket)):
            return error_response(401, "unauthorized", "missing or wrong token (or ticket)")
    if auth == "panel" and not guard.panel_ok(request):
        return error_response(
            403, "panel_credential_required",
            "only the paired extension may do this (the token alone reads and reports)",
        )  # fmt: skip
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = exc.reason.lower().replace(" ", "_")
        extra = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else {}
        response = error_response(exc.status, code, exc.text or exc.reason, **extra)
    if not response.prepared:
        response.headers.update(cors_headers(origin))
    return response


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """An `on_response_prepare` hook, so the middleware's own refusals, handler errors,
    aiohttp's 404/405/500 and streams all carry the same headers."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
