"""The security checklists of issues 8 and 14, one test per line, against the real process.

Lines already proven elsewhere are named in docs/reliability.md (tests/server/web/test_security.py,
test_cli.py, test_activity.py, mcp/test_endpoint.py); the tests here add what those do not cover: the same
checks on every entry point (SSE, WebSocket upgrades on the wire, MCP), and the variants."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sidemirror.web.rules import PINNED_EXTENSION_ID

from tests.harness.auth import AUTH, TOKEN
from tests.harness.cli import run_cli
from tests.harness.paths import ROOT
from tests.harness.server import Server

EXT = f"chrome-extension://{PINNED_EXTENSION_ID}"
OTHER_EXT = "chrome-extension://" + "b" * 32
WS_DIR = "/home/dev/sec"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: Any) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("sec"), "--log-level", "debug")
    server.start()
    server.ingest(WS_DIR, "s1", [{"type": "user", "content": "hello"}])
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
    reply = server.exchange(method, path, data, headers, timeout=5, most=65536)
    return reply.status, dict(reply.headers), reply.body


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
    server = Server(tmp_path, log_level="debug", access_log=True)
    server.start()
    try:
        server.ingest(WS_DIR, "s1", [{"type": "user", "content": "x"}])
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
        (info,) = run.glob("server-*.json")
        assert (run.stat().st_mode & 0o777) == 0o700
        assert (info.stat().st_mode & 0o777) == 0o600
        assert json.loads(info.read_text())["port"] == server.port
    finally:
        server.stop()
    assert not list(run.glob("server-*.json"))


# 10. Non-loopback --host refused without --allow-remote (every spelling).
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "0"])
def test_non_loopback_host_refused(tmp_path: Path, host: str) -> None:
    proc = Server(tmp_path, "--host", host, port=0, token=None).refused()
    assert proc.returncode == 2 and "allow-remote" in proc.stderr, proc.stderr
    assert not list((tmp_path / "run").glob("server-*.json"))


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


# --- issue 14: only the owner, one identity, least privilege, no leak through any field ---

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching OS users needs root")


def curl_as_nobody(url: str, *args: str) -> tuple[int, str]:
    out = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         "curl", "-s", "-m", "5", "-o", "-", "-w", "\n%{http_code}", *args, url],
        capture_output=True, text=True, timeout=20,
    ).stdout  # fmt: skip
    body, _, status = out.rpartition("\n")
    return int(status), body


# 11. Same OS user only: another user's process gets 403 everywhere, pairing included.
@needs_root
def test_another_os_user_is_refused_on_the_real_process(srv: Server) -> None:
    token_header = ("-H", f"Authorization: Bearer {TOKEN}")
    for path, args in (
        ("/api/pair", ("-X", "POST", "-H", f"Origin: {EXT}")),
        ("/api/workspaces", token_header),
        (f"/workspace/{ws_id()}/session/stream?session=s1", token_header),
        ("/activity/stream", token_header),
        ("/mcp", (*token_header, "-X", "POST", "-H", "Content-Type: application/json",
                  "-d", '{"jsonrpc":"2.0","id":1,"method":"ping"}')),
        ("/health", ()),
    ):  # fmt: skip
        status, body = curl_as_nobody(srv.url(path), *args)
        assert status == 403 and "other_user" in body, (path, status, body)
        assert TOKEN not in body
    status, _, body = call(srv, "/api/workspaces", headers=AUTH)
    assert status == 200  # the owner reads (pairing needs the native host or a code)


# 12. Where the OS gives no owner (forced here), pairing needs the code `sidemirror pair` prints.
def test_pairing_code_flow_on_the_real_process(tmp_path: Path) -> None:
    server = Server(tmp_path, "--pairing-code")
    server.start()
    try:
        pair = {"Origin": EXT, "Content-Type": "application/json"}
        status, _, body = call(server, "/api/pair", method="POST", headers=pair, data=b"{}")
        assert status == 403 and b"pairing_code_required" in body and TOKEN.encode() not in body
        cli = subprocess.run(
            [sys.executable, "-m", "sidemirror", "pair", "--runtime-dir", str(tmp_path / "run")],
            env={"PYTHONPATH": str(ROOT / "server"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, timeout=20,
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
        code = cli.stdout.split("Pairing code: ", 1)[1].split()[0]
        data = json.dumps({"code": code}).encode()
        status, _, body = call(server, "/api/pair", method="POST", headers=pair, data=data)
        assert status == 200 and json.loads(body)["token"] == TOKEN
        assert (
            json.loads(body)["panel"]
            == (tmp_path / "data" / "panel_credential").read_text().strip()
        )
        assert call(server, "/api/pair", method="POST", headers=pair, data=data)[0] == 403
    finally:
        server.stop()


# 12b. The panel credential stays where it is kept: 0600 in the data dir, and handed out only by
# the pairing host or for a code; never in the runtime file, /health, /api/identify or a log.
def test_the_panel_credential_reaches_no_file_answer_or_log_but_its_own(tmp_path: Path) -> None:
    server = Server(tmp_path, log_level="debug", access_log=True)
    server.start()
    try:
        kept = server.data / "panel_credential"
        assert oct(kept.stat().st_mode & 0o777) == "0o600"
        panel = kept.read_text().strip()
        (runtime,) = (tmp_path / "run").glob("server-*.json")
        assert panel not in runtime.read_text()
        answers = [
            call(server, "/health")[2],
            call(server, "/api/identify?nonce=" + "ab" * 16)[2],
            call(server, "/api/pair", method="POST", headers={"Origin": EXT}, data=b"{}")[2],
            call(server, "/api/workspaces", headers=AUTH)[2],
        ]
        # A wrong credential is refused and not echoed either.
        status, _, body = call(server, "/api/pair/code", method="POST",
                               headers={**AUTH, "X-Sidemirror-Panel": panel[:-1] + "x"})  # fmt: skip
        assert status == 403
        answers.append(body)
        assert not [a for a in answers if panel.encode() in a]
    finally:
        server.stop()
    logs = server.stderr() + "".join(p.read_text() for p in tmp_path.glob("out.*.log"))
    assert "/api/pair" in logs and panel not in logs and panel[:-1] not in logs


# 13. One server identity: server_id kept across restarts; the proof needs the token.
def test_server_id_survives_a_restart_and_only_the_token_holder_can_prove_it(
    tmp_path: Path,
) -> None:
    import hashlib
    import hmac

    server = Server(tmp_path)
    server.start()
    try:
        first = server.health()["server_id"]
    finally:
        server.stop()
    server.start()
    try:
        assert server.health()["server_id"] == first
        nonce = "ab" * 16
        answer = server.get(f"/api/identify?nonce={nonce}", auth=False)
        msg = f"sidemirror-identify:{first}:{nonce}".encode()
        assert answer == {"server_id": first,
                          "proof": hmac.new(TOKEN.encode(), msg, hashlib.sha256).hexdigest()}  # fmt: skip
        assert hmac.new(b"another-token", msg, hashlib.sha256).hexdigest() != answer["proof"]
        assert call(server, "/api/identify?nonce=abc")[0] == 400
    finally:
        server.stop()
    path = server.data / "server_id"
    assert path.read_text().strip() == first and (path.stat().st_mode & 0o777) == 0o600


# 14. Same headers on every response the real process gives, refusals included.
def test_every_status_carries_no_store_and_nosniff(srv: Server) -> None:
    host = f"Host: 127.0.0.1:{srv.port}\r\n"
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    cases = {
        200: f"GET /health HTTP/1.1\r\n{host}\r\n",
        204: f"OPTIONS /api/workspaces HTTP/1.1\r\n{host}Origin: {EXT}\r\n"
             "Access-Control-Request-Method: GET\r\n\r\n",
        400: f"GET /api/identify?nonce=1 HTTP/1.1\r\n{host}\r\n",
        401: f"GET /api/workspaces HTTP/1.1\r\n{host}\r\n",
        403: f"GET /api/workspaces HTTP/1.1\r\n{host}{auth}Origin: https://evil.test\r\n\r\n",
        404: f"GET /nowhere HTTP/1.1\r\n{host}{auth}\r\n",
        405: f"PUT /health HTTP/1.1\r\n{host}{auth}Content-Length: 0\r\n\r\n",
        413: f"POST /api/activity HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n"
             f"Content-Length: {(1 << 20) + 1}\r\n\r\n",
        415: f"POST /api/activity HTTP/1.1\r\n{host}{auth}Content-Type: text/plain\r\n"
             "Content-Length: 2\r\n\r\n{}",
        421: f"GET /health HTTP/1.1\r\nHost: evil.test:{srv.port}\r\n\r\n",
    }  # fmt: skip
    for status, request in cases.items():
        response = raw(srv, request.encode())
        head = response.split(b"\r\n\r\n", 1)[0].lower()
        assert status_of(response) == status, (status, response[:200])
        assert b"cache-control: no-store" in head, (status, head)
        assert b"x-content-type-options: nosniff" in head, (status, head)


# 15. Authorization that is not UTF-8: 401, and no traceback in the log.
def test_a_non_utf8_authorization_header_is_401(srv: Server) -> None:
    resp = raw(srv, f"GET /api/workspaces HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n".encode()
               + b"Authorization: Bearer \xff\xfe\x80\r\n\r\n")  # fmt: skip
    assert status_of(resp) == 401
    assert "Traceback" not in srv.stderr()


# 16. aiohttp's own error log never prints a header value.
def test_a_malformed_request_never_logs_its_headers(srv: Server) -> None:
    value = "opaque-credential-7f3a9c"
    for header in (f"Authorization: Custom {value}\x01", f"X-Api-Key: {value}\x7f"):
        raw(srv, f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n{header}\r\n\r\n".encode())
    assert "Error handling request" in srv.stderr()  # logged, at debug level here...
    assert value not in srv.stderr()  # ...without the request's bytes


# 17. Data dir 0700 and every file in it 0600, debug trace included, whatever the umask.
def test_every_file_the_server_writes_is_private_whatever_the_umask(tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "events.jsonl"
    server = Server(tmp_path, "--debug-events-jsonl", str(trace))
    old = os.umask(0)  # the server inherits it: only explicit modes keep files private
    try:
        server.start()
    finally:
        os.umask(old)
    try:
        server.ingest(WS_DIR, "s1", [{"type": "user", "content": "x"}])
        call(server, "/api/activity", method="POST", data=b'{"command":"click"}',
             headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
    finally:
        server.stop()
    paths = [server.data, *server.data.rglob("*"), trace.parent, trace]
    assert len(paths) > 6
    for path in paths:
        want = 0o700 if path.is_dir() else 0o600
        assert (path.stat().st_mode & 0o777) == want, (path, oct(path.stat().st_mode))


# 18. Clients trust only a runtime file that is ours.
@needs_root
def test_clients_refuse_another_users_runtime_file(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    theirs = run / "server-0123456789abcdef.json"
    theirs.write_text(json.dumps({"port": 9, "pid": 1, "token": "theirs"}))
    os.chown(run, NOBODY, NOBODY)
    os.chown(theirs, NOBODY, NOBODY)
    env = {"PYTHONPATH": str(ROOT / "server"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for command in (["token"], ["status"], ["ingest", "--workspace", "/w"]):
        proc = subprocess.run([sys.executable, "-m", "sidemirror", *command, "--runtime-dir",
                               str(run)], env=env, capture_output=True, text=True, timeout=20,
                              input="")  # fmt: skip
        assert proc.returncode == 2, (command, proc.stderr)
        assert f"refusing to use {run}: it belongs to uid {NOBODY}" in proc.stderr
        assert "theirs" not in proc.stdout + proc.stderr


# 19. Without XDG_RUNTIME_DIR the runtime dir is private and in the user's own cache dir.
def test_runtime_dir_fallback_is_private_and_ours(tmp_path: Path) -> None:
    with Server(tmp_path, runtime_dir="default", token=None) as server:
        run = tmp_path / ".cache" / "sidemirror" / "run"
        assert server.runtime_dir == run and (run.stat().st_mode & 0o777) == 0o700
        token = run_cli("token", home=tmp_path)
        assert token.returncode == 0 and token.stdout.strip(), token.stderr
