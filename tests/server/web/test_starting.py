"""While the server is imported, the starting responder answers on its socket (web/starting.py):
`/health` says "starting", everything else 503 `starting`, under the server's own owner, Host
and Origin rules; then the server takes the socket over and answers the next connection."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sidemirror import PROTOCOL_VERSION, __version__
from sidemirror.listen_socket import bind_socket
from sidemirror.web.about import FEATURES, load_server_id
from sidemirror.web.peer import OwnerCache
from sidemirror.web.rules import PINNED_EXTENSION_ID, SECURITY_HEADERS, extension_origins
from sidemirror.web.starting import StartingResponder

EXT = f"chrome-extension://{PINNED_EXTENSION_ID}"


@contextmanager
def responder(tmp_path: Path, owners: OwnerCache | None = None) -> Iterator[tuple[int, str]]:
    with bind_socket("127.0.0.1", 0) as sock:
        server_id = load_server_id(tmp_path)
        owners = owners or OwnerCache(enabled=True)
        with StartingResponder(
            sock, server_id=server_id, origins=extension_origins(()), owners=owners
        ):
            yield sock.getsockname()[1], server_id


def request(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, dict(resp.getheaders()), json.loads(data) if data else None
    finally:
        conn.close()


def test_health_says_who_answers_and_that_it_is_starting(tmp_path: Path) -> None:
    with responder(tmp_path) as (port, server_id):
        status, headers, body = request(port, "GET", "/health")
    assert status == 200
    assert body["status"] == "starting"
    assert body["app"] == "sidemirror" and body["server_id"] == server_id
    assert (body["version"], body["protocol"], body["features"]) == (
        __version__,
        PROTOCOL_VERSION,
        FEATURES,
    )
    assert body["indexing"] == {"done": 0, "total": None, "read": 0}
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    assert headers["Connection"] == "close"  # the next connection may reach the server
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/workspaces", None),
        ("POST", "/api/pair", b"{}"),
        ("GET", "/workspace/abc/session/stream?session=s1&ticket=t", None),
        ("DELETE", "/api/anything", None),
    ],
)
def test_everything_else_is_asked_to_come_back(
    tmp_path: Path, method: str, path: str, body: bytes | None
) -> None:
    with responder(tmp_path) as (port, _):
        headers = {"Authorization": "Bearer x", "Origin": EXT}
        status, got, answer = request(port, method, path, headers, body)
    assert status == 503
    assert answer["error"]["code"] == "starting"
    assert got["Retry-After"] == "1"
    assert got["Access-Control-Allow-Origin"] == EXT and got["Vary"] == "Origin"


def test_the_server_rules_hold_while_it_starts(tmp_path: Path) -> None:
    with responder(tmp_path) as (port, _):
        status, _, body = request(port, "GET", "/health", {"Host": f"evil.test:{port}"})
        assert (status, body["error"]["code"]) == (421, "misdirected_request")
        status, got, body = request(port, "GET", "/health", {"Origin": "https://evil.test"})
        assert (status, body["error"]["code"]) == (403, "forbidden_origin")
        assert "Access-Control-Allow-Origin" not in got
        status, got, body = request(port, "OPTIONS", "/api/pair", {"Origin": EXT})
        assert status == 204 and body is None
        assert got["Access-Control-Allow-Origin"] == EXT
        assert "POST" in got["Access-Control-Allow-Methods"]


def test_another_os_users_connection_is_refused(tmp_path: Path) -> None:
    # The server's uid as another user's: every connection is that other user's.
    owners = OwnerCache(enabled=True, uid=os.geteuid() + 1)
    with responder(tmp_path, owners) as (port, _):
        status, _, body = request(port, "GET", "/health")
    assert (status, body["error"]["code"]) == (403, "other_user")


def test_a_malformed_request_gets_the_api_error_shape(tmp_path: Path) -> None:
    with responder(tmp_path) as (port, _), socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"NOT A REQUEST\r\n\r\n")
        head, _, body = _read_all(c).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert json.loads(body)["error"]["code"] == "bad_request"


def test_a_silent_client_does_not_hold_the_takeover(tmp_path: Path) -> None:
    with bind_socket("127.0.0.1", 0) as sock:
        starting = StartingResponder(
            sock, server_id="0" * 32, origins=frozenset(), owners=OwnerCache(enabled=False)
        )
        starting.start()
        with socket.create_connection(sock.getsockname()) as silent:
            assert request(sock.getsockname()[1], "GET", "/health")[0] == 200
            starting.stop()  # returns although `silent` has sent nothing yet
            silent.setblocking(False)
            with pytest.raises(BlockingIOError):
                silent.recv(1)  # still open, unanswered: only its own thread waits on it


async def test_the_server_takes_the_socket_over(tmp_path: Path) -> None:
    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    app = web.Application()
    app.router.add_get("/health", hello)
    with bind_socket("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        starting = StartingResponder(
            sock, server_id="0" * 32, origins=frozenset(), owners=OwnerCache(enabled=False)
        )
        starting.start()
        assert request(port, "GET", "/health")[2]["status"] == "starting"
        runner = web.AppRunner(app)
        await runner.setup()
        starting.stop()
        site = web.SockSite(runner, sock)
        await site.start()
        try:
            # A blocking client, from a thread: the loop must run to answer it.
            answer = await asyncio.to_thread(request, port, "GET", "/health")
            assert answer[2] == {"status": "ok"}
        finally:
            await runner.cleanup()


def _read_all(c: socket.socket) -> bytes:
    chunks = []
    while chunk := c.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
