"""One server per data dir: a second `serve` on the same data dir says where the first runs and
exits non-zero; `status` lists every running server; `token`, `url` and `ingest` pick the one on
the current data dir and say which when there is a choice; no server is an error, never an empty
line on stdout."""

from __future__ import annotations

import json
import subprocess
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.harness.cli import run_cli
from tests.harness.server import Server


def _cli(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--runtime-dir", str(home / "run"), home=home, stdin=stdin)


def _server(home: Path, data_dir: Path | None = None) -> Server:
    """A real server process (port 0: never a port a user's server could hold)."""
    return Server(home, port=0, data_dir=data_dir or "default", token=None, log_level=None)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "claude").mkdir()
    return tmp_path


def test_a_second_serve_on_the_same_data_dir_says_where_the_first_runs(home: Path) -> None:
    with _server(home, home / "data") as first:
        assert first.proc is not None
        pid, port = first.proc.pid, first.port
        second = _server(home, home / "data").refused()
        assert second.returncode == 2
        assert f"already running on :{port} (pid {pid})" in second.stderr
        assert "--data-dir" in second.stderr
        assert "listening" not in second.stdout
        # The first one still serves and is still the one clients find.
        assert json.loads(_cli(home, "status", "--json").stdout)["port"] == port


def test_a_second_serve_with_another_runtime_dir_still_names_the_first_ones_port(
    home: Path,
) -> None:
    """The runtime files are apart, so only the data dir's lock can say where the first runs."""
    with _server(home, home / "data") as first:
        assert first.proc is not None
        pid, port = first.proc.pid, first.port
        other = Server(home, port=0, data_dir=home / "data", runtime_dir=home / "other-run")
        second = other.refused()
        assert second.returncode == 2
        assert f"already running on :{port} (pid {pid}) with the data dir {home / 'data'}" in (
            second.stderr
        )
        assert not (home / "other-run").exists() or not any((home / "other-run").iterdir())


def test_status_lists_both_servers_and_token_picks_the_current_data_dir(home: Path) -> None:
    default_data = home / ".local" / "share" / "sidemirror"  # the default data dir of HOME
    with ExitStack() as stack:
        port_default = stack.enter_context(_server(home)).port
        port_other = stack.enter_context(_server(home, home / "other")).port
        status = _cli(home, "status")
        assert status.returncode == 0
        lines = status.stdout.splitlines()
        assert any(f"on port {port_default} " in ln and str(default_data) in ln for ln in lines)
        assert any(f"on port {port_other} " in ln and str(home / "other") in ln for ln in lines)
        listed = json.loads(_cli(home, "status", "--json").stdout)["servers"]
        assert sorted(s["port"] for s in listed) == sorted([port_default, port_other])

        token = _cli(home, "token")
        assert token.returncode == 0 and len(token.stdout.strip()) >= 32
        assert f"using the server on :{port_default}" in token.stderr
        url = _cli(home, "url", "--data-dir", str(home / "other"))
        assert url.stdout.strip() == f"http://127.0.0.1:{port_other}"
        assert f"using the server on :{port_other}" in url.stderr
        other_token = _cli(home, "token", "--data-dir", str(home / "other")).stdout.strip()
        assert other_token and other_token != token.stdout.strip()

        ingest = _cli(home, "ingest", "--workspace", str(home), "--format", "events", stdin="")
        assert f"using the server on :{port_default}" in ingest.stderr


def test_without_a_server_for_the_data_dir_token_lists_the_running_ones(home: Path) -> None:
    with _server(home, home / "a") as a, _server(home, home / "b") as b:
        port_a, port_b = a.port, b.port
        token = _cli(home, "token")
    assert token.returncode == 1 and token.stdout == ""
    assert "no server runs on the default data dir" in token.stderr
    assert f":{port_a}" in token.stderr and f":{port_b}" in token.stderr
    assert "--data-dir" in token.stderr


def test_one_server_on_any_data_dir_is_the_one_clients_use(home: Path) -> None:
    with _server(home, home / "elsewhere") as server:
        port = server.port
        url = _cli(home, "url")
    assert url.returncode == 0 and url.stdout.strip() == f"http://127.0.0.1:{port}"
    assert url.stderr == ""  # nothing to choose, nothing said


@pytest.mark.parametrize("command", [["token"], ["url"], ["status"], ["pair"]])
def test_no_server_is_an_error_on_stderr_and_nothing_on_stdout(
    home: Path, command: list[str]
) -> None:
    done = _cli(home, *command)
    assert done.returncode == 1
    if command == ["status"]:
        assert "no server is running (start it with: sidemirror serve)" in done.stdout
    else:
        assert done.stdout == ""
        assert "no server is running (start it with: sidemirror serve)" in done.stderr


def test_a_server_killed_hard_leaves_no_server_behind_for_clients(home: Path) -> None:
    _server(home, home / "data").start().kill()
    assert list((home / "run").glob("server-*.json"))  # it could not remove its file...
    token = _cli(home, "token")
    assert token.returncode == 1 and token.stdout == ""  # ...which is not taken for a server
    with _server(home, home / "data") as server:  # and the data dir is free again
        port = server.port
        assert _cli(home, "url").stdout.strip() == f"http://127.0.0.1:{port}"
