"""The token and the port outlive a restart: the token is kept (0600) in the data dir until
`sidemirror token --rotate`, and the server asks first for the port it had last time, so the
extension and MCP clients find the same server where they left it (token_store.py, data_dir.py,
listen_socket.py)."""

from __future__ import annotations

import json
import socket
import stat
from pathlib import Path

from tests.harness.cli import http_get, run_cli
from tests.harness.ports import free_range
from tests.harness.server import Server


def _runtime_token(tmp_path: Path) -> str:
    (runtime,) = (tmp_path / "run").glob("server-*.json")
    return str(json.loads(runtime.read_text())["token"])


def test_the_token_is_kept_across_restarts_until_rotated(tmp_path: Path) -> None:
    token_file = tmp_path / "data" / "token"
    with Server(tmp_path, token=None, log_level=None):
        first = _runtime_token(tmp_path)
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.read_text().strip() == first
    with Server(tmp_path, token=None, log_level=None) as server:
        port = server.port
        assert _runtime_token(tmp_path) == first  # the extension stays paired
        rotated = run_cli(
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
    with Server(tmp_path, token=None, log_level=None) as server:
        port = server.port
        assert _runtime_token(tmp_path) == new
        assert http_get(port, "/api/workspaces", new)[0] == 200
        assert http_get(port, "/api/workspaces", first)[0] == 401  # the old one no longer works


def test_token_rotate_works_with_no_server_running(tmp_path: Path) -> None:
    rotated = run_cli(
        "token", "--rotate", "--runtime-dir", str(tmp_path / "run"),
        "--data-dir", str(tmp_path / "data"),
    )  # fmt: skip
    assert rotated.returncode == 0 and rotated.stderr == ""
    assert (tmp_path / "data" / "token").read_text().strip() == rotated.stdout.strip()


def serve_in_range(tmp_path: Path, ports: range) -> Server:
    """The real `sidemirror serve`, with no --port, choosing within `ports`."""
    code = (
        "import sys; import sidemirror.listen_socket as ls; "
        "ls.PORT_RANGE = range(int(sys.argv[1]), int(sys.argv[2])); "
        "from sidemirror.cli import main; sys.exit(main(sys.argv[3:]))"
    )
    launch = ("-c", code, str(ports.start), str(ports.stop))
    return Server(tmp_path, port="default", token=None, log_level=None, python_args=launch)


def test_the_server_asks_first_for_the_port_it_had_last_time(tmp_path: Path) -> None:
    ports = free_range(3)
    with socket.socket() as holder:  # the first port is taken the first time only
        holder.bind(("127.0.0.1", ports[0]))
        holder.listen()
        with serve_in_range(tmp_path, ports) as server:
            assert server.port == ports[1]
    assert (tmp_path / "data" / "port").read_text().strip() == str(ports[1])
    with serve_in_range(tmp_path, ports) as server:
        assert server.port == ports[1]  # not the first free one: where its clients left it
    with socket.socket() as holder:  # taken now: the first free one, as before
        holder.bind(("127.0.0.1", ports[1]))
        holder.listen()
        with serve_in_range(tmp_path, ports) as server:
            assert server.port == ports[0]
