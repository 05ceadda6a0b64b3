"""The security rules (docs/security.md) as tests, one rule per test: Host, Origin, token, tickets, bodies, CORS."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.server.support import (
    EXT_ORIGIN,
    WS_UPGRADE,
    ClientFactory,
    ingest,
    panel_headers,
    state_of,
)


async def _code(client: TestClient[Any, Any]) -> str:
    resp = await client.post("/api/pair/code", headers=panel_headers(client))
    code: str = (await resp.json())["code"]
    return code


@pytest.mark.parametrize(
    "host",
    [
        "localhost.:{port}",
        "127.1:{port}",
        "[::ffff:127.0.0.1]:{port}",
        "127.0.0.1:{other}",
        "localhost",
        "evil.example:{port}",
        "127.0.0.1.nip.io:{port}",
        "0.0.0.0:{port}",
    ],
)
async def test_foreign_host_gets_421_before_any_handler(
    make_client: ClientFactory, host: str
) -> None:
    client = await make_client()
    port = client.port
    resp = await client.post(
        "/api/pair", headers={"Host": host.format(port=port, other=port + 1), "Origin": EXT_ORIGIN}
    )
    assert resp.status == 421
    body = await resp.json()
    assert body["error"]["code"] == "misdirected_request"
    assert TOKEN not in await resp.text()


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
async def test_loopback_host_spellings_are_allowed(make_client: ClientFactory, host: str) -> None:
    client = await make_client()
    resp = await client.get("/health", headers={"Host": host.format(port=client.port)})
    assert resp.status == 200


async def test_health_has_no_token_and_reports_the_contract(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.get("/health")
    body = await resp.json()
    assert set(body) == {
        "app",
        "version",
        "protocol",
        "features",
        "status",
        "server_id",
        "instance",
        "uptime_s",
        "workspaces",
        "indexing",
        "parse_errors_detail",
        "parse_errors",
        "streams",
        "search_index",
    }
    assert body["app"] == "sidemirror" and body["protocol"] == 1 and body["status"] == "ok"
    # The v1.1 additions this server implements.
    assert {"history", "diffs", "context", "search"} <= set(body["features"])
    assert "attention" in body["features"]
    assert TOKEN not in await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"


async def test_pair_without_a_code_gives_nothing_even_to_the_owner(
    make_client: ClientFactory,
) -> None:
    """The same OS user and the extension's Origin prove nothing (a relay passes both)."""
    client = await make_client()
    resp = await client.post("/api/pair", headers={"Origin": EXT_ORIGIN})
    assert resp.status == 403
    assert (await resp.json())["error"]["code"] == "pairing_code_required"
    assert TOKEN not in await resp.text()
    assert state_of(client).guard.panel_credential not in await resp.text()


async def test_pair_with_a_code_gives_both_credentials_to_the_pinned_extension(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    body = json.dumps({"code": await _code(client)})
    headers = {"Origin": EXT_ORIGIN, "Content-Type": "application/json"}
    resp = await client.post("/api/pair", headers=headers, data=body)
    assert resp.status == 200
    answer = await resp.json()
    guard = state_of(client).guard
    assert answer["token"] == TOKEN and answer["panel"] == guard.panel_credential
    assert answer["server_id"] == (await (await client.get("/health")).json())["server_id"]
    assert resp.headers["Access-Control-Allow-Origin"] == EXT_ORIGIN
    assert resp.headers["Vary"] == "Origin"


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "null",
        "https://evil.example",
        "chrome-extension://aaaabbbbccccddddeeeeffffgggghhhh",
        "http://127.0.0.1:47470",
    ],
)
async def test_pair_refuses_other_origins(make_client: ClientFactory, origin: str | None) -> None:
    client = await make_client()
    headers = {"Origin": origin} if origin is not None else {}
    resp = await client.post("/api/pair", headers=headers)
    assert resp.status == 403
    assert TOKEN not in await resp.text()
    assert "Access-Control-Allow-Origin" not in resp.headers


async def test_extra_extension_id_is_allowed(make_client: ClientFactory) -> None:
    other = "abcdefghijklmnopabcdefghijklmnop"
    client = await make_client(extension_ids=(other,))
    resp = await client.post(
        "/api/pair",
        headers={"Origin": f"chrome-extension://{other}", "Content-Type": "application/json"},
        data=json.dumps({"code": await _code(client)}),
    )
    assert resp.status == 200


async def test_foreign_origin_has_no_side_effects(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.post(
        "/api/ingest",
        params={"workspace": "/w", "format": "events"},
        data='{"type":"assistant","content":"x"}\n',
        headers={**NDJSON, "Origin": "https://evil.example"},
    )
    assert resp.status == 403
    assert state_of(client).store.workspaces == {}


@pytest.mark.parametrize(
    "auth", [None, "Bearer wrong", f"Bearer {'x' * len(TOKEN)}", f"Basic {TOKEN}", TOKEN]
)
async def test_token_is_required(make_client: ClientFactory, auth: str | None) -> None:
    client = await make_client()
    headers = {"Authorization": auth} if auth is not None else {}
    for path in ("/api/workspaces", "/workspace/abc/sessions"):
        resp = await client.get(path, headers=headers)
        assert resp.status == 401, path
        assert (await resp.json())["error"]["code"] == "unauthorized"


async def test_ticket_is_single_use_and_only_for_streams(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "hello"}])
    ws_id = next(iter(state_of(client).store.workspaces))
    ticket = (await (await client.post("/api/ticket", headers=AUTH)).json())["ticket"]
    # Not accepted where the token is required.
    assert (await client.get("/api/workspaces", params={"ticket": ticket})).status == 401
    ticket = (await (await client.post("/api/ticket", headers=AUTH)).json())["ticket"]
    resp = await client.get(f"/workspace/{ws_id}/session/stream", params={"ticket": ticket})
    assert resp.status == 200
    resp.close()
    again = await client.get(f"/workspace/{ws_id}/session/stream", params={"ticket": ticket})
    assert again.status == 401


async def test_expired_ticket_is_refused(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "hello"}])
    tickets = state_of(client).guard.tickets
    tickets.ttl_s = -1
    ticket = tickets.issue()
    ws_id = next(iter(state_of(client).store.workspaces))
    resp = await client.get(f"/workspace/{ws_id}/session/stream", params={"ticket": ticket})
    assert resp.status == 401


@pytest.mark.parametrize(
    "ctype",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json",
    ],
)
async def test_ingest_needs_ndjson_content_type(make_client: ClientFactory, ctype: str) -> None:
    client = await make_client()
    resp = await client.post(
        "/api/ingest",
        params={"workspace": "/w"},
        data=b"{}\n",
        headers={**AUTH, "Content-Type": ctype},
    )
    assert resp.status == 415
    assert state_of(client).store.workspaces == {}


async def test_ingest_body_over_16_mib_is_413(make_client: ClientFactory) -> None:
    client = await make_client()
    line = b'{"type":"assistant","content":"' + b"a" * 1000 + b'"}\n'
    body = line * ((16 << 20) // len(line) + 2)
    resp = await client.post("/api/ingest", params={"workspace": "/w"}, data=body, headers=NDJSON)
    assert resp.status == 413


async def test_json_endpoint_checks_content_type(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.post("/api/ticket", headers=AUTH)
    assert resp.status == 200  # no body needed
    resp = await client.post(
        "/api/pair", headers={"Origin": EXT_ORIGIN, "Content-Type": "text/plain"}, data="x"
    )
    assert resp.status == 415  # pairing reads the code: JSON only


async def test_preflight_echoes_exact_origin_never_star(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.options(
        "/api/workspaces", headers={"Origin": EXT_ORIGIN, "Access-Control-Request-Method": "GET"}
    )
    assert resp.status == 204
    assert resp.headers["Access-Control-Allow-Origin"] == EXT_ORIGIN
    evil = await client.options("/api/workspaces", headers={"Origin": "https://evil.example"})
    assert evil.status == 403
    assert "Access-Control-Allow-Origin" not in evil.headers


async def test_websocket_ingest_refused_before_101(make_client: ClientFactory) -> None:
    client = await make_client()
    params = {"workspace": "/w", "format": "events"}
    resp = await client.get(
        "/api/ingest/ws",
        params=params,
        headers={**WS_UPGRADE, "Origin": "https://evil.example", **AUTH},
    )
    assert resp.status == 403
    resp = await client.get(
        "/api/ingest/ws",
        params=params,
        headers=WS_UPGRADE,
    )
    assert resp.status == 401
