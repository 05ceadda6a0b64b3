"""Security, part 2 (docs/security.md): the connection's OS user, pairing codes where the OS
cannot tell, one server identity, and the same headers on every response."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app
from sidemirror.cli import main as cli_main
from sidemirror.runtime_file import write_runtime_file
from sidemirror.web.pair import MAX_FAILURES

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.server.support import (
    EXT_ORIGIN,
    ClientFactory,
    ingest,
    make_settings,
    panel_headers,
    state_of,
)

NOBODY = 65534
NONCE = "00112233445566778899aabbccddeeff"


def expected_proof(server_id: str, nonce: str) -> str:
    msg = f"sidemirror-identify:{server_id}:{nonce}".encode()
    return hmac.new(TOKEN.encode(), msg, hashlib.sha256).hexdigest()


# --- same OS user only ---


async def curl_as(uid: int, url: str, *args: str) -> tuple[int, str]:
    """One request from a process of another OS user: (status, body)."""
    proc = await asyncio.create_subprocess_exec(
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "curl", "-s", "-m", "5", "-o", "-", "-w", "\n%{http_code}", *args, url,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await proc.communicate()
    body, _, status = out.decode().rpartition("\n")
    return int(status), body


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
async def test_another_os_user_gets_403_everywhere_and_the_owner_still_works(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "private"}])
    ws = next(iter(state_of(client).store.workspaces))
    base = f"http://127.0.0.1:{client.port}"
    cases: list[tuple[str, tuple[str, ...]]] = [
        ("/api/pair", ("-X", "POST", "-H", f"Origin: {EXT_ORIGIN}")),
        ("/api/workspaces", ("-H", f"Authorization: Bearer {TOKEN}")),
        (f"/workspace/{ws}/session/stream", ("-H", f"Authorization: Bearer {TOKEN}")),
        ("/activity/stream", ("-H", f"Authorization: Bearer {TOKEN}")),
        ("/health", ()),
        (f"/api/identify?nonce={NONCE}", ()),
    ]
    for path, args in cases:
        status, body = await curl_as(NOBODY, base + path, *args)
        assert status == 403, (path, status, body)
        assert json.loads(body)["error"]["code"] == "other_user"
        assert TOKEN not in body and "private" not in body
    # The same user's client, on its own connections, reads (pairing needs a code or the
    # native messaging host, whoever asks).
    assert (await client.get("/api/workspaces", headers=AUTH)).status == 200


async def test_a_connection_of_another_uid_is_refused_before_any_handler(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    owners = state_of(client).guard.owners
    owners.uid = os.geteuid() + 1  # as if the server ran as someone else
    for method, path, headers in (
        ("POST", "/api/pair", {"Origin": EXT_ORIGIN}),
        ("GET", "/api/workspaces", AUTH),
        ("POST", "/api/ingest?workspace=/w", NDJSON),
        ("GET", "/no/such/route", {}),
    ):
        resp = await client.request(method, path, headers=headers, data=b"{}\n")
        assert resp.status == 403, path
        assert (await resp.json())["error"]["code"] == "other_user"
    assert state_of(client).store.workspaces == {}


async def test_the_owner_is_looked_up_once_per_connection(make_client: ClientFactory) -> None:
    client = await make_client()
    owners = state_of(client).guard.owners
    for _ in range(5):  # one keep-alive connection
        assert (await client.get("/api/workspaces", headers=AUTH)).status == 200
    assert owners.lookups == 1


# --- pairing where the OS gives no owner ---


async def test_pairing_needs_a_code_when_the_owner_is_unknown(make_client: ClientFactory) -> None:
    client = await make_client(pairing_code=True)
    refused = await client.post("/api/pair", headers={"Origin": EXT_ORIGIN})
    assert refused.status == 403
    assert (await refused.json())["error"]["code"] == "pairing_code_required"
    assert TOKEN not in await refused.text()
    assert (await client.post("/api/pair/code")).status == 401
    # The runtime-file token alone cannot mint a code (it would pair itself into a panel).
    token_only = await client.post("/api/pair/code", headers=AUTH)
    assert (await token_only.json())["error"]["code"] == "panel_credential_required"
    answer = await (await client.post("/api/pair/code", headers=panel_headers(client))).json()
    assert answer["expires_in"] == 300 and len(answer["code"]) == 7
    pair = {"Origin": EXT_ORIGIN, "Content-Type": "application/json"}
    body = json.dumps({"code": answer["code"].lower().replace("-", " ")})
    ok = await client.post("/api/pair", headers=pair, data=body)
    assert ok.status == 200
    got = await ok.json()
    assert (got["token"], got["panel"]) == (TOKEN, state_of(client).guard.panel_credential)
    again = await client.post("/api/pair", headers=pair, data=body)
    assert (await again.json())["error"]["code"] == "wrong_pairing_code"  # single use
    # Still needs the extension Origin and a loopback Host, like every pairing.
    code = (await (await client.post("/api/pair/code", headers=panel_headers(client))).json())[
        "code"
    ]
    no_origin = await client.post("/api/pair", data=json.dumps({"code": code}),
                                  headers={"Content-Type": "application/json"})  # fmt: skip
    assert no_origin.status == 403


async def test_wrong_guesses_void_the_live_code(make_client: ClientFactory) -> None:
    client = await make_client(pairing_code=True)
    minted = await client.post("/api/pair/code", headers=panel_headers(client))
    code = (await minted.json())["code"]
    pair = {"Origin": EXT_ORIGIN, "Content-Type": "application/json"}
    for n in range(MAX_FAILURES):
        guess = json.dumps({"code": f"ZZZ-ZZ{n}"})
        assert (await client.post("/api/pair", headers=pair, data=guess)).status == 403
    late = await client.post("/api/pair", headers=pair, data=json.dumps({"code": code}))
    assert late.status == 403


async def test_an_expired_code_is_refused(make_client: ClientFactory) -> None:
    from sidemirror.web.pair import PAIRING_CODES

    client = await make_client(pairing_code=True)
    app = client.server.app
    assert isinstance(app, web.Application)
    app[PAIRING_CODES].ttl_s = -1
    code = app[PAIRING_CODES].issue()
    pair = {"Origin": EXT_ORIGIN, "Content-Type": "application/json"}
    resp = await client.post("/api/pair", headers=pair, data=json.dumps({"code": code}))
    assert resp.status == 403


async def test_sidemirror_pair_prints_a_code_that_pairs(
    make_client: ClientFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = await make_client(pairing_code=True)
    runtime = tmp_path / "pair-run"
    write_runtime_file(
        runtime, {"port": client.port, "token": TOKEN, "pid": os.getpid()}, tmp_path / "data"
    )
    loop = asyncio.get_running_loop()
    code = await loop.run_in_executor(None, cli_main, ["pair", "--runtime-dir", str(runtime)])
    assert code == 0
    printed = capsys.readouterr().out
    shown = printed.split("Pairing code: ", 1)[1].split()[0]
    resp = await client.post("/api/pair", data=json.dumps({"code": shown}),
                             headers={"Origin": EXT_ORIGIN, "Content-Type": "application/json"})  # fmt: skip
    assert (await resp.json())["token"] == TOKEN


# --- one server identity ---


async def test_health_and_identify_name_the_same_server(make_client: ClientFactory) -> None:
    client = await make_client()
    health = await (await client.get("/health")).json()
    server_id = health["server_id"]
    assert len(server_id) == 32 and int(server_id, 16) >= 0
    resp = await client.get("/api/identify", params={"nonce": NONCE})  # no token needed
    assert resp.status == 200
    assert await resp.json() == {"server_id": server_id, "proof": expected_proof(server_id, NONCE)}
    assert TOKEN not in await resp.text()
    other = await (await client.get("/api/identify", params={"nonce": NONCE.upper()})).json()
    assert (
        other["proof"]
        == expected_proof(server_id, NONCE.upper())
        != expected_proof(server_id, NONCE)
    )


@pytest.mark.parametrize("nonce", [None, "", "ab" * 15 + "a", "0" * 129, "g" * 32, "0x" + "0" * 32])
async def test_identify_needs_a_hex_nonce_of_32_to_128_digits(
    make_client: ClientFactory, nonce: str | None
) -> None:
    client = await make_client()
    params = {} if nonce is None else {"nonce": nonce}
    resp = await client.get("/api/identify", params=params)
    assert resp.status == 400
    assert (await resp.json())["error"]["code"] == "bad_nonce"


async def test_identify_passes_the_host_and_origin_checks(make_client: ClientFactory) -> None:
    client = await make_client()
    evil = await client.get(f"/api/identify?nonce={NONCE}", headers={"Origin": "https://x.test"})
    assert evil.status == 403
    rebound = await client.get(f"/api/identify?nonce={NONCE}", headers={"Host": "evil.test"})
    assert rebound.status == 421
    ext = await client.get(f"/api/identify?nonce={NONCE}", headers={"Origin": EXT_ORIGIN})
    assert ext.status == 200 and ext.headers["Access-Control-Allow-Origin"] == EXT_ORIGIN


async def test_server_id_is_kept_in_the_data_dir(aiohttp_client: Any, tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    first: TestClient[Any, Any] = await aiohttp_client(create_app(settings, TOKEN))
    server_id = (await (await first.get("/health")).json())["server_id"]
    await first.close()
    second: TestClient[Any, Any] = await aiohttp_client(create_app(settings, "another-token"))
    assert (await (await second.get("/health")).json())["server_id"] == server_id
    path = settings.data_dir / "server_id"
    assert path.read_text().strip() == server_id
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.data_dir.stat().st_mode) == 0o700


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
        (200, "GET", "/api/identify?nonce=" + "0" * 32, ext, None),
        (200, "GET", f"/workspace/{ws}/session/stream", AUTH, None),
        (204, "OPTIONS", "/api/workspaces", {**ext, "Access-Control-Request-Method": "GET"}, None),
        (400, "GET", f"/workspace/{ws}/session?limit=0", AUTH, None),
        (400, "GET", "/api/identify?nonce=1", {}, None),
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
    # 403 to another OS user, on a server that takes every connection for another user's.
    other: TestClient[Any, Any] = await aiohttp_client(_boom_app(tmp_path / "other"))
    state_of(other).guard.owners.uid = os.geteuid() + 1
    resp = await other.get("/health")
    assert resp.status == 403 and all(resp.headers.get(k) == v for k, v in SECURE.items())
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
