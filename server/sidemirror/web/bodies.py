"""Reading what a client sent (JSON and NDJSON bodies, numeric parameters) and the error body.

Every refusal is a clear 4xx naming the offending value; nothing a client sends becomes a 500.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from sidemirror.core.jsonline import decode_line
from sidemirror.core.numbers import parse_count
from sidemirror.core.redact import redact_text

JSON_LIMIT = 1 << 20
NDJSON_LIMIT = 16 << 20
WS_FRAME_LIMIT = 1 << 20
BODY_TIMEOUT_S = 30.0  # a JSON body is at most 1 MiB: on loopback it arrives in milliseconds


def error_response(status: int, code: str, message: str, **headers: str) -> web.Response:
    """`{"error": {"code", "message"}}`, the one error shape of the HTTP API. The message may
    quote what the client sent (an unknown session id...): redacted like every output."""
    return web.json_response(
        {"error": {"code": code, "message": redact_text(message)}},
        status=status,
        headers=headers or None,
    )


async def read_json(request: web.Request) -> Any:
    """The JSON body, or a clear 415/413/400."""
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(
            text=f"expected application/json, got {request.content_type!r}"
        )
    if request.content_length is not None and request.content_length > JSON_LIMIT:
        raise web.HTTPRequestEntityTooLarge(max_size=JSON_LIMIT, actual_size=request.content_length)
    # read(n) returns what has arrived so far: loop until EOF (chunked or slow senders), but a
    # body that trickles in for longer than BODY_TIMEOUT_S holds a connection for nothing.
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            while len(body) <= JSON_LIMIT:
                chunk = await request.content.read(JSON_LIMIT + 1 - len(body))
                if not chunk:
                    break
                body += chunk
    except TimeoutError:
        raise web.HTTPRequestTimeout(
            text=f"the JSON body did not arrive within {BODY_TIMEOUT_S:.0f} s"
        ) from None
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


def parse_limit(request: web.Request, default: int) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return default
    value = parse_count(raw)
    if value is None or not 1 <= value <= 10_000:
        raise web.HTTPBadRequest(text=f"limit must be an integer from 1 to 10000, got {raw!r}")
    return value
