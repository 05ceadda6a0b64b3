"""The security checklist of issue 8, one test per line, against the real process.

Lines already proven elsewhere are named in docs/reliability.md (tests/server/test_security.py,
test_cli.py, test_activity.py, test_mcp.py); the tests here add what those do not cover: the same
checks on every entry point (SSE, WebSocket upgrades on the wire, MCP), and the variants."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sidemirror.settings import PINNED_EXTENSION_ID

from tests.conftest import ROOT

from .harness import AUTH, TOKEN, Server

EXT = f"chrome-extension://{PINNED_EXTENSION_ID}"
OTHER_EXT = "chrome-extension://" + "b" * 32
WS_DIR = "/home/dev/sec"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: Any) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("sec"), "--log-level", "debug")
    server.start()
    server.ingest([{"type": "user", "content": "hello"}], WS_DIR, "s1")
    yield server
    server.stop()


def raw(server: Server, request: bytes, read: int = 4096) -> bytes:
    """One request on a raw socket (exact headers, no client library fixing them up)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(read)
            if not chunk:
                break
            data += chunk
        return data


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def call(server: Server, path: str, *, method: str = "GET", headers: dict[str, str] | None = None,
         data: bytes | None = None) -> tuple[int, dict[str, str], bytes]:  # fmt: skip
    req = urllib.request.Request(server.url(path), data=data, method=method,
                                 headers=headers or {})  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read(65536)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def ws_id() -> str:
    import hashlib

    return hashlib.sha256(WS_DIR.encode()).hexdigest()[:12]


def upgrade(server: Server, path: str, *, host: str | None = None, extra: str = "") -> bytes:
    host = host or f"127.0.0.1:{server.port}"
    return raw(server, (
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        f"{extra}\r\n"
    ).encode())  # fmt: skip


# 1. Host spellings (DNS rebinding): the check covers every entry point, before any handler.
@pytest.mark.parametrize("path", ["/health", "/workspace/{ws}/session/stream?session=s1",
                                  "/activity/stream", "/mcp"])  # fmt: skip
@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1.nip.io:{port}",
                                  "LOCALHOST.:{port}", "2130706433:{port}", ""])  # fmt: skip
def test_host_allowlist_on_every_entry_point(srv: Server, path: str, host: str) -> None:
    host_line = f"Host: {host.format(port=srv.port)}\r\n" if host else ""
    resp = raw(srv, (f"GET {path.format(ws=ws_id())} HTTP/1.1\r\n{host_line}"
                     f"Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n").encode())  # fmt: skip
    assert status_of(resp) in (400, 421), resp[:200]


# 2. Origin: evil, `null`, another extension id: 403 with a valid token, and no side effect.
@pytest.mark.parametrize("origin", ["https://evil.example", "null", OTHER_EXT,
                                    f"http://127.0.0.1:{47470}", EXT.upper()])  # fmt: skip
def test_foreign_origin_is_refused_with_a_valid_token_and_changes_nothing(
    srv: Server, origin: str
) -> None:
    marker = f"origin-probe-{abs(hash(origin))}"
    body = json.dumps({"type": "user", "content": marker}).encode() + b"\n"
    status, headers, _ = call(srv, f"/api/ingest?workspace={WS_DIR}&format=events&session=s1",
                              method="POST", data=body, headers={**AUTH, "Origin": origin,
                              "Content-Type": "application/x-ndjson"})  # fmt: skip
    assert status == 403
    assert "Access-Control-Allow-Origin" not in headers
    for path in (f"/workspace/{ws_id()}/session/stream?session=s1", "/activity/stream", "/mcp"):
        assert call(srv, path, headers={**AUTH, "Origin": origin})[0] == 403
    items = srv.snapshot(ws_id(), "s1")["items"]
    assert all(marker not in i.get("content", "") for i in items)


# 3. Token: missing, wrong, same length, in the query string: refused on streams and MCP too.
@pytest.mark.parametrize("auth", [None, "Bearer wrong", f"Bearer {'x' * len(TOKEN)}",
                                  f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", "Bearer "])  # fmt: skip
@pytest.mark.parametrize("path", ["/workspace/{ws}/session/stream?session=s1", "/activity/stream",
                                  "/api/workspaces", "/api/refs?url=https://a.example/"])  # fmt: skip
def test_token_variants_are_refused_everywhere(srv: Server, auth: str | None, path: str) -> None:
    headers = {"Authorization": auth} if auth else {}
    assert call(srv, path.format(ws=ws_id()), headers=headers)[0] == 401
    assert (
        call(srv, path.format(ws=ws_id()) + ("&" if "?" in path else "?") + f"token={TOKEN}")[0]
        == 401
    )


def test_mcp_needs_the_token(srv: Server) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    for auth in (None, f"Bearer {'x' * len(TOKEN)}"):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if auth:
            headers["Authorization"] = auth
        assert call(srv, "/mcp", method="POST", data=body, headers=headers)[0] == 401


# 4. Content types: text/plain, form, multipart -> 415 on JSON and NDJSON endpoints alike.
@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", None])  # fmt: skip
@pytest.mark.parametrize(
    "path", ["/api/activity", "/api/ingest?workspace=/w&format=events", "/mcp"]
)
def test_simple_request_content_types_are_415(srv: Server, ctype: str | None, path: str) -> None:
    headers = {**AUTH, **({"Content-Type": ctype} if ctype else {})}
    status, _, _ = call(srv, path, method="POST", data=b'{"command":"click"}', headers=headers)
    assert status == 415


# 5. Body size: JSON over 1 MiB -> 413, with or without Content-Length (chunked).
@pytest.mark.parametrize(
    "chunked",
    [
        False,
        True,
    ],
)
def test_json_body_over_one_mib_is_413(srv: Server, chunked: bool) -> None:
    payload = json.dumps({"command": "click", "result": "r" * (1 << 20)}).encode()
    if chunked:
        head = (f"POST /api/activity HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()  # fmt: skip
        body = f"{len(payload):x}\r\n".encode() + payload + b"\r\n0\r\n\r\n"
        try:
            resp = raw(srv, head + body)
        except ConnectionResetError:
            return  # refused mid-body: acceptable as long as nothing was stored
        assert status_of(resp) == 413
    else:
        status, _, _ = call(srv, "/api/activity", method="POST", data=payload,
                            headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
        assert status == 413


# 6. WebSocket upgrades with an evil Origin, a foreign Host or no token: refused before 101.
@pytest.mark.parametrize("path", ["/api/ingest/ws?workspace=/w&format=events", "/api/activity/ws"])
@pytest.mark.parametrize("case", ["evil_origin", "null_origin", "no_token", "foreign_host",
                                  "ticket_instead_of_token"])  # fmt: skip
def test_websocket_upgrade_refused_before_101(srv: Server, path: str, case: str) -> None:
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    if case == "evil_origin":
        resp = upgrade(srv, path, extra=auth + "Origin: https://evil.example\r\n")
    elif case == "null_origin":
        resp = upgrade(srv, path, extra=auth + "Origin: null\r\n")
    elif case == "no_token":
        resp = upgrade(srv, path, extra=f"Origin: {EXT}\r\n")
    elif case == "foreign_host":
        resp = upgrade(srv, path, host=f"evil.example:{srv.port}", extra=auth)
    else:
        ticket = _ticket(srv)
        resp = upgrade(srv, path + ("&" if "?" in path else "?") + f"ticket={ticket}")
    assert resp.startswith(b"HTTP/1.1 4"), resp[:120]
    assert b" 101 " not in resp.split(b"\r\n", 1)[0]


def test_websocket_upgrade_with_token_and_extension_origin_is_101(srv: Server) -> None:
    resp = upgrade(srv, "/api/activity/ws",
                   extra=f"Authorization: Bearer {TOKEN}\r\nOrigin: {EXT}\r\n")  # fmt: skip
    assert resp.startswith(b"HTTP/1.1 101"), resp[:120]


# 7. Tickets: single use on both streams, unusable as a token, never logged.
def _ticket(srv: Server) -> str:
    status, _, body = call(srv, "/api/ticket", method="POST", headers=AUTH)
    assert status == 200
    return str(json.loads(body)["ticket"])


@pytest.mark.parametrize("path", ["/workspace/{ws}/session/stream?session=s1", "/activity/stream"])
def test_ticket_is_single_use_on_each_stream(srv: Server, path: str) -> None:
    ticket = _ticket(srv)
    url = path.format(ws=ws_id()) + ("&" if "?" in path else "?") + f"ticket={ticket}"
    first = raw(srv, f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n\r\n".encode())
    assert status_of(first) == 200
    assert call(srv, url)[0] == 401
    assert call(srv, "/api/workspaces?ticket=" + _ticket(srv))[0] == 401


def test_tickets_and_token_never_reach_the_log(tmp_path: Path) -> None:
    server = Server(tmp_path, "--log-level", "debug")
    server.start()
    try:
        server.ingest([{"type": "user", "content": "x"}], WS_DIR, "s1")
        used = []
        for path in (f"/workspace/{ws_id()}/session/stream?session=s1", "/activity/stream"):
            ticket = _ticket(server)
            used.append(ticket)
            sep = "&" if "?" in path else "?"
            raw(server, f"GET {path}{sep}ticket={ticket} HTTP/1.1\r\nHost: 127.0.0.1:"
                        f"{server.port}\r\n\r\n".encode())  # fmt: skip
            call(server, f"{path}{sep}ticket={ticket}")  # second use: refused, and logged
        call(server, f"/api/workspaces?token={TOKEN}")
        call(server, "/api/workspaces", headers={"Authorization": "Bearer " + TOKEN[:-1] + "y"})
    finally:
        server.stop()
    logs = server.stderr() + "".join(p.read_text() for p in tmp_path.glob("out.*.log"))
    assert "/activity/stream" in logs  # the access log is there...
    for secret in (*used, TOKEN, TOKEN[:-1]):
        assert secret not in logs  # ...without secrets


# 8. CORS: never `*`; the exact extension origin with `Vary: Origin` on real responses.
@pytest.mark.parametrize(
    "path", ["/health", "/api/workspaces", "/workspace/{ws}/session?session=s1"]
)
def test_cors_exact_origin_and_vary_never_star(srv: Server, path: str) -> None:
    status, headers, _ = call(srv, path.format(ws=ws_id()), headers={**AUTH, "Origin": EXT})
    assert status == 200
    assert headers.get("Access-Control-Allow-Origin") in (EXT, None)
    if "Access-Control-Allow-Origin" in headers:
        assert "origin" in headers.get("Vary", "").lower()
    status, headers, _ = call(srv, path.format(ws=ws_id()), headers={**AUTH})
    assert headers.get("Access-Control-Allow-Origin") != "*"
    pre = call(srv, path.format(ws=ws_id()), method="OPTIONS",
               headers={"Origin": EXT, "Access-Control-Request-Method": "GET"})  # fmt: skip
    assert pre[1].get("Access-Control-Allow-Origin") == EXT
    assert "origin" in pre[1].get("Vary", "").lower()


# 9. Runtime file: dir 0700, file 0600, even when the dir existed with looser modes.
def test_runtime_file_private_even_in_a_preexisting_loose_dir(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    server = Server(tmp_path)
    server.start()
    try:
        info = run / "server.json"
        assert (run.stat().st_mode & 0o777) == 0o700
        assert (info.stat().st_mode & 0o777) == 0o600
        assert json.loads(info.read_text())["port"] == server.port
    finally:
        server.stop()
    assert not (run / "server.json").exists()


# 10. Non-loopback --host refused without --allow-remote (every spelling).
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "0"])
def test_non_loopback_host_refused(tmp_path: Path, host: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sidemirror", "serve", "--host", host, "--port", "0",
         "--runtime-dir", str(tmp_path / "run"), "--data-dir", str(tmp_path / "d")],
        env={"PYTHONPATH": str(ROOT / "server"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert proc.returncode == 2 and "allow-remote" in proc.stderr, proc.stderr
    assert not (tmp_path / "run" / "server.json").exists()


def test_json_body_arriving_in_pieces_is_read_whole(srv: Server) -> None:
    import time

    payload = json.dumps({"command": "click", "workspace": WS_DIR, "result": "r" * 50_000}).encode()
    half = len(payload) // 2
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        s.sendall((f"POST /api/activity HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
                   f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
                  + payload[:half])  # fmt: skip
        time.sleep(0.3)
        s.sendall(payload[half:])
        resp = s.recv(4096)
    assert status_of(resp) == 200, resp[:300]
