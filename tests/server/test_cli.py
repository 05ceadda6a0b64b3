"""The real `sidemirror` process: ports, runtime file, logs without secrets, refusals."""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from sidemirror.listen_socket import PORT_RANGE

from tests.harness.cli import http_get, run_cli
from tests.harness.ports import PORT_RANGE_GROUP, free_port
from tests.harness.server import Server


def test_runtime_file_is_private_and_removed_on_exit(tmp_path: Path) -> None:
    port = free_port()
    with Server(tmp_path, port=port, token=None, log_level=None) as server:
        assert server.proc is not None
        (runtime,) = (tmp_path / "run").glob("server-*.json")
        assert stat.S_IMODE(runtime.stat().st_mode) == 0o600
        assert stat.S_IMODE(runtime.parent.stat().st_mode) == 0o700
        info = json.loads(runtime.read_text())
        assert info["port"] == port and info["pid"] == server.proc.pid and len(info["token"]) >= 32
        token_out = run_cli("token", "--runtime-dir", str(tmp_path / "run"))
        assert token_out.returncode == 0 and token_out.stdout.strip() == info["token"]
        status = run_cli("status", "--json", "--runtime-dir", str(tmp_path / "run"))
        assert status.returncode == 0
        assert json.loads(status.stdout)["health"]["app"] == "sidemirror"
        assert server.stop() == 0
        assert not runtime.exists()
    status = run_cli("status", "--runtime-dir", str(tmp_path / "run"))
    assert status.returncode == 1 and "no server is running" in status.stdout


def test_token_and_tickets_never_reach_the_log(tmp_path: Path) -> None:
    token = "env-token-" + "9" * 40
    with Server(tmp_path, token=token, log_level="debug", access_log=True) as server:
        port = server.port
        assert http_get(port, "/api/workspaces", token)[0] == 200
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/ticket",
            method="POST",
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            ticket = json.load(resp)["ticket"]
        assert http_get(port, f"/workspace/000000000000/session/stream?ticket={ticket}")[0] == 404
        assert http_get(port, f"/api/workspaces?token={token}")[0] == 401
        health = http_get(port, "/health")[1].decode()
        assert token not in health
    out, err = server.stdout(), server.stderr()
    assert "/api/workspaces" in err  # the access log is there...
    assert token not in out + err and ticket not in out + err  # ...without secrets


def test_the_access_log_is_off_unless_asked_for(tmp_path: Path) -> None:
    """A panel polls several routes a second: one line each drowned what the server had to say.
    Only the request lines go; the server's own lines stay."""
    token = "env-token-" + "8" * 40
    with Server(tmp_path, token=token, log_level=None) as server:
        for _ in range(5):
            assert http_get(server.port, "/api/workspaces", token)[0] == 200
        assert http_get(server.port, "/health")[0] == 200
    err = server.stderr()
    assert "/api/workspaces" not in err and "/health" not in err, err
    assert "aiohttp.access" not in err
    assert "sidemirror" in err  # the server still logs (startup lines): only requests are gone


def test_non_loopback_host_is_refused_without_allow_remote(tmp_path: Path) -> None:
    result = run_cli("serve", "--host", "0.0.0.0", "--runtime-dir", str(tmp_path))
    assert result.returncode == 2
    assert "refusing to listen on non-loopback host '0.0.0.0'" in result.stderr


def test_explicit_busy_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = Server(tmp_path, port=port, token=None).refused()
    assert result.returncode == 2
    assert f"cannot bind 127.0.0.1:{port}" in result.stderr


def test_health_answers_while_the_server_starts_and_the_server_takes_over(
    tmp_path: Path,
) -> None:
    """The port answers before the server is imported: `/health` says "starting" and the API asks
    to come back (503), until the server itself answers — and never "starting" again."""
    port, token = free_port(), "t" * 40
    # Not `Server.start`, which waits for what this test watches happen: the same command.
    server = Server(tmp_path, port=port, token=token, log_level=None)
    proc = subprocess.Popen(
        server.command(),
        env=server.environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    statuses: list[str] = []
    api_while_starting: list[tuple[int, bytes]] = []
    try:
        while "ok" not in statuses:
            assert proc.poll() is None, proc.stderr and proc.stderr.read()
            try:
                health = json.loads(http_get(port, "/health")[1])
            except OSError:  # not bound yet
                time.sleep(0.005)
                continue
            if not statuses or statuses[-1] != health["status"]:
                statuses.append(health["status"])
            if health["status"] == "starting":
                assert health["server_id"] == (tmp_path / "data" / "server_id").read_text().strip()
                api_while_starting.append(http_get(port, "/api/workspaces", token))
        assert http_get(port, "/api/workspaces", token)[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
    # The responder runs for as long as the server imports itself (half a second at least),
    # and the first request is sent as soon as the port is bound: it sees "starting".
    assert statuses == ["starting", "ok"]
    codes = [
        (s, json.loads(b)["error"]["code"] if s != 200 else None) for s, b in api_while_starting
    ]
    assert (503, "starting") in codes
    # The server may have taken over between a "starting" /health and the request after it.
    assert set(codes) <= {(503, "starting"), (200, None)}


@pytest.mark.xdist_group(PORT_RANGE_GROUP)  # binds in the range the e2e tests probe
def test_default_port_skips_a_taken_port_in_the_range(tmp_path: Path) -> None:
    holders = []
    try:
        # Take the first free port of the range: the server must pick another one in the range.
        for port in PORT_RANGE:
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            s.listen()
            holders.append(s)
            taken = port
            break
        with Server(tmp_path, port="default", token=None, log_level=None) as server:
            bound = server.port
            assert bound in PORT_RANGE and bound != taken
            assert json.loads(http_get(bound, "/health")[1])["app"] == "sidemirror"
    finally:
        for s in holders:
            s.close()


def test_python_dash_m_and_version(tmp_path: Path) -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("sidemirror ")
