"""The token and the port outlive a restart: the token is kept (0600) in the data dir until
`sidemirror token --rotate`, and the server asks first for the port it had last time, so the
extension and MCP clients find the same server where they left it (token_store.py, data_dir.py,
listen_socket.py)."""

from __future__ import annotations

import json
import random
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.ports import free_port
from tests.server.test_cli import _env, _get, serve


def _runtime_token(tmp_path: Path) -> str:
    (runtime,) = (tmp_path / "run").glob("server-*.json")
    return str(json.loads(runtime.read_text())["token"])


def _sidemirror(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidemirror", *argv], env=_env(), capture_output=True, text=True
    )


def test_the_token_is_kept_across_restarts_until_rotated(tmp_path: Path) -> None:
    token_file = tmp_path / "data" / "token"
    with serve(tmp_path, "--port", str(free_port())):
        first = _runtime_token(tmp_path)
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.read_text().strip() == first
    with serve(tmp_path, "--port", str(free_port())) as (_, port):
        assert _runtime_token(tmp_path) == first  # the extension stays paired
        rotated = _sidemirror(
            "token", "--rotate", "--runtime-dir", str(tmp_path / "run"),
            "--data-dir", str(tmp_path / "data"),
        )  # fmt: skip
        assert rotated.returncode == 0, rotated.stderr
        new = rotated.stdout.strip()
        assert len(new) >= 43 and new != first
        assert f"the server on :{port}" in rotated.stderr
        assert "still accepts the old token until it restarts" in rotated.stderr
        assert token_file.read_text().strip() == new
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    with serve(tmp_path, "--port", str(free_port())) as (_, port):
        assert _runtime_token(tmp_path) == new
        assert _get(port, "/api/workspaces", new)[0] == 200
        assert _get(port, "/api/workspaces", first)[0] == 401  # the old one no longer works


def test_token_rotate_works_with_no_server_running(tmp_path: Path) -> None:
    rotated = _sidemirror(
        "token", "--rotate", "--runtime-dir", str(tmp_path / "run"),
        "--data-dir", str(tmp_path / "data"),
    )  # fmt: skip
    assert rotated.returncode == 0 and rotated.stderr == ""
    assert (tmp_path / "data" / "token").read_text().strip() == rotated.stdout.strip()


def _free_range(size: int) -> range:
    """`size` consecutive free loopback ports, standing in for 47470–47479 (which belong to the
    user's own server, never to a test)."""
    for _ in range(200):
        start = random.randrange(20000, 32000)
        ports = range(start, start + size)
        holders = []
        try:
            for port in ports:
                s = socket.socket()
                holders.append(s)
                s.bind(("127.0.0.1", port))
            return ports
        except OSError:
            continue
        finally:
            for s in holders:
                s.close()
    raise AssertionError("no free port range")


@contextmanager
def serve_in_range(tmp_path: Path, ports: range) -> Iterator[int]:
    """The real `sidemirror serve`, with no --port, choosing within `ports`."""
    code = (
        "import sys; import sidemirror.listen_socket as ls; "
        "ls.PORT_RANGE = range(int(sys.argv[1]), int(sys.argv[2])); "
        "from sidemirror.cli import main; sys.exit(main(sys.argv[3:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(ports.start), str(ports.stop), "serve",
         "--runtime-dir", str(tmp_path / "run"), "--data-dir", str(tmp_path / "data"),
         "--claude-dir", str(tmp_path / "claude"), "--codex-dir", str(tmp_path / "codex")],
        env=_env(HOME=str(tmp_path)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, (line, proc.stderr and proc.stderr.read())
        yield int(line.rsplit(":", 1)[1])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_the_server_asks_first_for_the_port_it_had_last_time(tmp_path: Path) -> None:
    ports = _free_range(3)
    with socket.socket() as holder:  # the first port is taken the first time only
        holder.bind(("127.0.0.1", ports[0]))
        holder.listen()
        with serve_in_range(tmp_path, ports) as port:
            assert port == ports[1]
    assert (tmp_path / "data" / "port").read_text().strip() == str(ports[1])
    with serve_in_range(tmp_path, ports) as port:
        assert port == ports[1]  # not the first free one: where its clients left it
    with socket.socket() as holder:  # taken now: the first free one, as before
        holder.bind(("127.0.0.1", ports[1]))
        holder.listen()
        with serve_in_range(tmp_path, ports) as port:
            assert port == ports[0]
