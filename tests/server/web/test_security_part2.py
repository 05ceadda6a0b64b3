"""Security, part 2 (docs/security.md): the same headers on every response, and an
Authorization header that is not UTF-8."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app

from tests.server.conftest import (
    AUTH,
    EXT_ORIGIN,
    TOKEN,
    ClientFactory,
    ingest,
    make_settings,
    state_of,
)

# --- the same headers on every response ---

SECURE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _boom_app(tmp_path: Path, **overrides: Any) -> web.Application:
    """The real app plus routes that fail the ways no real route should, so the 500 and a 507
    (a full disk) are covered too."""
    app = create_app(make_settings(tmp_path, **overrides), TOKEN)

    async def crash(request: web.Request) -> web.Response:
        raise RuntimeError("a bug")

    async def disk_full(request: web.Request) -> web.Response:
        raise web.HTTPInsufficientStorage(text="disk full")

    app.router.add_get("/test/crash", crash)
    app.router.add_get("/test/disk-full", disk_full)
    return app


async def test_every_status_carries_no_store_and_nosniff(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    client: TestClient[Any, Any] = await aiohttp_client(_boom_app(tmp_path))
    await ingest(client, [{"type": "user", "content": "x"}])
    ws = next(iter(state_of(client).store.workspaces))
    big = b'{"command":"click","result":"' + b"r" * (1 << 20) + b'"}'
    ext = {"Origin": EXT_ORIGIN}
    cases: list[tuple[int, str, str, dict[str, str], bytes | None]] = [
        (200, "GET", "/health", {}, None),
        (200, "POST", "/api/pair", ext, None),
        (200, "GET", f"/workspace/{ws}/session/stream", AUTH, None),
        (204, "OPTIONS", "/api/workspaces", {**ext, "Access-Control-Request-Method": "GET"}, None),
        (400, "GET", f"/workspace/{ws}/session?limit=0", AUTH, None),
        (401, "GET", "/api/workspaces", {}, None),
        (401, "GET", f"/workspace/{ws}/session/stream", {}, None),
        (403, "GET", "/api/workspaces", {**AUTH, "Origin": "https://evil.test"}, None),
        (403, "POST", "/api/pair", {}, None),
        (404, "GET", "/no/such/route", AUTH, None),
        (404, "GET", "/workspace/000000000000/sessions", AUTH, None),
        (405, "PUT", "/health", AUTH, None),
        (405, "GET", "/mcp", AUTH, None),
        (413, "POST", "/api/activity", {**AUTH, "Content-Type": "application/json"}, big),
        (415, "POST", "/api/activity", {**AUTH, "Content-Type": "text/plain"}, b"{}"),
        (421, "GET", "/health", {"Host": "evil.test"}, None),
        (500, "GET", "/test/crash", AUTH, None),
        (507, "GET", "/test/disk-full", AUTH, None),
    ]
    seen = set()
    for status, method, path, headers, data in cases:
        resp = await client.request(method, path, headers=headers, data=data)
        assert resp.status == status, (method, path, resp.status, await resp.text())
        for name, value in SECURE.items():
            assert resp.headers.get(name) == value, (status, path, name, dict(resp.headers))
        resp.close()
        seen.add(status)
    assert seen >= {200, 204, 400, 401, 403, 404, 405, 413, 415, 421, 500, 507}


async def test_an_authorization_header_that_is_not_utf8_is_401(make_client: ClientFactory) -> None:
    client = await make_client()
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    writer.write(
        b"GET /api/workspaces HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Authorization: Bearer \xff\xfe\xc3(\r\nConnection: close\r\n\r\n" % client.port
    )
    await writer.drain()
    response = await reader.read()
    writer.close()
    assert response.startswith(b"HTTP/1.1 401"), response[:200]
    assert b"Traceback" not in response
