"""What a crash or a hang-up leaves behind: the port can be bound again at once, and a client
that goes away is not an error with a traceback in the server log."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from pathlib import Path

import pytest

from tests.harness.auth import AUTH
from tests.harness.logs import tracebacks
from tests.harness.server import Server
from tests.harness.waiting import wait_until

from .test_crash_restart import WS_DIR, ws_id


def test_restart_after_kill_rebinds_the_same_port(tmp_path: Path) -> None:
    """A crash with clients connected leaves server-side sockets in FIN_WAIT/TIME_WAIT; the
    restarted server must still bind its explicit port (SO_REUSEADDR semantics)."""
    server = Server(tmp_path, same_port=True)
    server.start()
    try:
        for _ in range(5):
            socks = []
            for _ in range(3):
                s = socket.create_connection(("127.0.0.1", server.port))
                s.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
                assert s.recv(100).startswith(b"HTTP/1.1 200")
                socks.append(s)
            server.kill()
            socks[0].close()  # one client notices at once, the others later
            server.start()  # same port, immediately
            for s in socks[1:]:
                s.close()
            assert server.health()["status"] == "ok"
    finally:
        server.stop()


def _post_activity(server: Server, marker: str) -> None:
    body = json.dumps({"type": "command_end", "command": "click", "args": ["#a"],
                       "result": marker, "workspace": WS_DIR}).encode()  # fmt: skip
    req = urllib.request.Request(server.url("/api/activity"), data=body, method="POST",
                                 headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
    urllib.request.urlopen(req, timeout=5).read()


@pytest.mark.parametrize(
    "stream",
    [
        "session",
        "activity",
    ],
)
def test_client_hanging_up_is_not_logged_as_an_error(tmp_path: Path, stream: str) -> None:
    server = Server(tmp_path)
    server.start()
    try:
        server.ingest(WS_DIR, "s1", [{"type": "user", "content": "first"}])
        _post_activity(server, "first")
        path = (
            f"/workspace/{ws_id(WS_DIR)}/session/stream?session=s1"
            if stream == "session"
            else f"/activity/stream?workspace={ws_id(WS_DIR)}"
        )
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(
                    f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                    f"Authorization: {AUTH['Authorization']}\r\n\r\n".encode()
                )
                assert s.recv(4096).startswith(b"HTTP/1.1 200")
            time.sleep(0.05)
            for n in range(3):  # the handler only notices the hang-up when it next writes
                server.ingest(WS_DIR, "s1", [{"type": "user", "content": f"more {n}"}])
                _post_activity(server, f"more {n}")
        wait_until(lambda: server.health()["status"] == "ok", 5, "health")
        time.sleep(0.3)
        log = server.stderr()
    finally:
        server.stop()
    assert tracebacks(log) == [], log[-2000:]
