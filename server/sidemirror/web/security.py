"""Localhost is not a trust boundary (DESIGN §4): Host, Origin, token, tickets, bodies, errors.

Every request passes `security_middleware` before any handler runs. Handlers declare how they
authenticate with `@public`, `@pairing` or `@ticket_ok`; everything else needs the token.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from aiohttp import web

from sidemirror.core.jsonline import decode_line

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
H = TypeVar("H", bound=Handler)
Auth = Literal["public", "pairing", "token", "ticket_ok"]

JSON_LIMIT = 1 << 20
NDJSON_LIMIT = 16 << 20
TICKET_TTL_S = 60
_AUTH_ATTR = "_sidemirror_auth"


def _mark(auth: Auth) -> Callable[[H], H]:
    def wrap(handler: H) -> H:
        setattr(handler, _AUTH_ATTR, auth)
        return handler

    return wrap


public = _mark("public")
pairing = _mark("pairing")
ticket_ok = _mark("ticket_ok")


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def error_response(status: int, code: str, message: str, **headers: str) -> web.Response:
    return web.json_response(
        {"error": {"code": code, "message": message}}, status=status, headers=headers or None
    )


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
    allowed_origins: frozenset[str]
    tickets: Tickets
    extra_hosts: frozenset[str] = frozenset()

    def host_allowed(self, host_header: str | None, port: int) -> bool:
        if not host_header:
            return False
        host = host_header.lower()
        allowed = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
        allowed |= {f"{h}:{port}" for h in self.extra_hosts}
        return host in allowed

    def token_ok(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value:
            return False
        return hmac.compare_digest(value.strip().encode(), self.token.encode())


GUARD = web.AppKey("guard", Guard)


def _local_port(request: web.Request) -> int:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return int(sockname[1])
    return -1


def _cors_headers(origin: str | None) -> dict[str, str]:
    if origin is None:
        return {}
    # Never `*`: echo the one allowed origin, and tell caches it varies.
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


@web.middleware
async def security_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    guard = request.app[GUARD]
    if not guard.host_allowed(request.headers.get("Host"), _local_port(request)):
        return error_response(421, "misdirected_request", "Host header is not this server")
    origin = request.headers.get("Origin")
    if origin is not None and origin not in guard.allowed_origins:
        return error_response(403, "forbidden_origin", f"Origin {origin!r} is not allowed")
    if request.method == "OPTIONS" and origin is not None:
        return web.Response(
            status=204,
            headers={
                **_cors_headers(origin),
                "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
                "Access-Control-Allow-Headers": (
                    "Authorization, Content-Type, Last-Event-ID, Mcp-Session-Id, "
                    "MCP-Protocol-Version"
                ),
                "Access-Control-Max-Age": "600",
            },
        )
    route_handler = request.match_info.handler
    auth: Auth = getattr(route_handler, _AUTH_ATTR, "token")
    if auth == "pairing" and origin is None:
        return error_response(403, "forbidden_origin", "pairing needs an extension Origin")
    if auth in ("token", "ticket_ok") and not guard.token_ok(request):
        ticket = request.query.get("ticket")
        if not (auth == "ticket_ok" and ticket and guard.tickets.redeem(ticket)):
            return error_response(401, "unauthorized", "missing or wrong token (or ticket)")
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = exc.reason.lower().replace(" ", "_")
        extra = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else {}
        response = error_response(exc.status, code, exc.text or exc.reason, **extra)
    if not response.prepared:
        response.headers.update(_cors_headers(origin))
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Cache-Control", "no-store")
    return response


async def read_json(request: web.Request) -> Any:
    """The JSON body, or a clear 415/413/400."""
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(
            text=f"expected application/json, got {request.content_type!r}"
        )
    if request.content_length is not None and request.content_length > JSON_LIMIT:
        raise web.HTTPRequestEntityTooLarge(max_size=JSON_LIMIT, actual_size=request.content_length)
    # read(n) returns what has arrived so far: loop until EOF (chunked or slow senders).
    body = bytearray()
    while len(body) <= JSON_LIMIT:
        chunk = await request.content.read(JSON_LIMIT + 1 - len(body))
        if not chunk:
            break
        body += chunk
    if len(body) > JSON_LIMIT:
        raise web.HTTPRequestEntityTooLarge(max_size=JSON_LIMIT, actual_size=len(body))
    ok, value = decode_line(bytes(body))
    if not ok or not body.strip():
        raise web.HTTPBadRequest(text="body is not valid JSON (or is nested too deeply)")
    return value


def require_ndjson(request: web.Request) -> None:
    if request.content_type not in ("application/x-ndjson", "application/jsonl"):
        raise web.HTTPUnsupportedMediaType(
            text=f"expected application/x-ndjson, got {request.content_type!r}"
        )
    if request.content_length is not None and request.content_length > NDJSON_LIMIT:
        raise web.HTTPRequestEntityTooLarge(
            max_size=NDJSON_LIMIT, actual_size=request.content_length
        )
