"""Clients use a runtime file only if it is ours: otherwise a clear message and exit status 2,
before anything is sent (runtime.py, cli/__init__.py, clients/). A runtime file whose server is gone is
set aside, and whatever listens on the port must be that server (server_check.py) before the
hook or a command sends it the token or believes its answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sidemirror.cli import main as cli_main
from sidemirror.core.process_identity import start_ticks
from sidemirror.runtime_file import write_runtime_file

from tests.harness.cli import http_get
from tests.harness.paths import FIXTURES, ROOT
from tests.harness.server import Server

NOBODY = 65534
CLIENT_COMMANDS = [
    ["status"],
    ["token"],
    ["pair"],
    ["ingest", "--workspace", "/w"],
    ["observe-cdp", "--cdp", "http://127.0.0.1:9"],
    ["acp-tap", "--", "sh", "-c", "echo agent-started"],
]


def _spoil(run: Path, how: str) -> None:
    if how == "other_user":
        (runtime_file,) = run.glob("server-*.json")
        os.chown(runtime_file, NOBODY, NOBODY)
    else:
        os.chmod(run, 0o777)


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(
            "other_user",
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root"),
        ),
        "world_writable_folder",
    ],
)
@pytest.mark.parametrize("command", CLIENT_COMMANDS, ids=lambda c: c[0])
def test_client_commands_refuse_a_runtime_file_that_is_not_ours(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], how: str, command: list[str]
) -> None:
    run = tmp_path / "run"
    # A server someone else runs would answer on this port with their own token.
    write_runtime_file(run, {"port": 9, "pid": 1, "token": "their-token"})
    _spoil(run, how)
    verb, *rest = command
    code = cli_main([verb, "--runtime-dir", str(run), *rest])
    out, err = capfd.readouterr()
    assert code == 2
    assert f"sidemirror {verb}: refusing to use {run}" in err, err
    assert ("belongs to uid" if how == "other_user" else "others can write") in err
    assert "their-token" not in out + err
    assert "agent-started" not in out  # acp-tap refuses before starting the agent


def test_serve_refuses_a_symlinked_runtime_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (run / "link").symlink_to(target)
    proc = Server(tmp_path, port=0, runtime_dir=run / "link", token=None).refused()
    assert proc.returncode == 2, proc.stderr
    assert f"refusing to use {run / 'link'}: it is a symbolic link" in proc.stderr
    assert not list(target.iterdir())


# --- The runtime file's server is gone and an impostor holds its port -------------------------

IMPOSTOR = Path(__file__).with_name("impostor.py")
SIDEMIRROR = Path(sys.executable).with_name("sidemirror")
SECRET = "the-runtime-file-token-" + "x" * 24
SERVER_ID = "5" * 32  # the dead server's, copied by the impostor from its /health
PERMISSION_REQUEST = (FIXTURES / "hooks" / "permission-request.jsonl").read_text().splitlines()[-1]
AS_NOBODY = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="running as another uid needs root")


class Impostor:
    """tests/server/impostor.py running (as nobody, or as us), and what it has received."""

    def __init__(self, as_nobody: bool) -> None:
        # The script's text, not its path: another uid may not be able to read this checkout.
        argv = ["/usr/bin/python3", "-c", IMPOSTOR.read_text(), SERVER_ID]
        self.proc = subprocess.Popen(
            [*AS_NOBODY, *argv] if as_nobody else argv,
            stdout=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith("port "), first
        self.port = int(first.split()[1])

    def received(self) -> list[dict[str, Any]]:
        """Every request before now. A last request of ours marks the end, so nothing waits on
        time: the client under test has exited, so what it sent was answered, hence printed."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/end-of-test", timeout=10):
            pass
        assert self.proc.stdout is not None
        seen = []
        for line in self.proc.stdout:
            request = json.loads(line)
            if request["path"] == "/end-of-test":
                return seen
            seen.append(request)
        raise AssertionError("the impostor ended")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def impostor_of_another_user() -> Iterator[Impostor]:
    impostor = Impostor(as_nobody=True)
    yield impostor
    impostor.stop()


@pytest.fixture
def impostor_of_this_user() -> Iterator[Impostor]:
    impostor = Impostor(as_nobody=False)
    yield impostor
    impostor.stop()


def _runtime_file(run: Path, port: int, **fields: Any) -> Path:
    """A runtime file as the server writes it (by default this process's pid, start time and
    boot id: not stale), naming `port`."""
    data = {"port": port, "token": SECRET, "server_id": SERVER_ID, **fields}
    return write_runtime_file(run, data, run.parent / "data")


def _sidemirror(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real `sidemirror` command (it imports the tree on the inherited PYTHONPATH)."""
    return subprocess.run(
        [str(SIDEMIRROR), *argv], input=stdin, capture_output=True, text=True, timeout=60
    )


def _hook_stands_aside(run: Path) -> str:
    """Run the real hook on a permission request with the runtime files in `run`: it must print
    no decision and exit 0, so the terminal asks as usual. Returns its stderr, which says why."""
    done = _sidemirror("hook", "--runtime-dir", str(run), stdin=PERMISSION_REQUEST)
    assert (done.returncode, done.stdout) == (0, "")
    return done.stderr


def _pid_reused_by(impostor: Impostor, run: Path) -> Path:
    """The server died (kill -9: its file stayed) and the kernel gave its pid to the impostor,
    which listens on its port: only the start time tells the two processes apart."""
    started = start_ticks(impostor.proc.pid)
    assert started is not None
    return _runtime_file(run, impostor.port, pid=impostor.proc.pid, started=started - 1)


@needs_root
def test_the_hook_ignores_a_stale_runtime_file_whose_pid_was_reused_by_an_impostor(
    tmp_path: Path, impostor_of_another_user: Impostor
) -> None:
    impostor = impostor_of_another_user
    path = _pid_reused_by(impostor, tmp_path / "run")
    why = _hook_stands_aside(tmp_path / "run")
    assert f"ignoring the stale runtime file {path}" in why
    assert f"pid {impostor.proc.pid} now belongs to another process" in why
    assert impostor.received() == []  # neither the token nor the event


@needs_root
def test_the_hook_sends_nothing_to_another_users_listener_on_the_port(
    tmp_path: Path, impostor_of_another_user: Impostor
) -> None:
    impostor = impostor_of_another_user
    # A runtime file that is not stale: only the owner of the listening socket shows that the
    # port is not our server's.
    _runtime_file(tmp_path / "run", impostor.port)
    assert f"belongs to uid {NOBODY}, not to you" in _hook_stands_aside(tmp_path / "run")
    assert impostor.received() == []


def test_the_hook_sends_no_token_to_a_listener_that_cannot_prove_it_holds_it(
    tmp_path: Path, impostor_of_this_user: Impostor
) -> None:
    impostor = impostor_of_this_user
    # Our own uid listens (a stray process of ours): it is asked to prove it holds the token,
    # without being sent it, and gets nothing else.
    _runtime_file(tmp_path / "run", impostor.port)
    why = _hook_stands_aside(tmp_path / "run")
    assert "cannot prove it holds the runtime file's token" in why
    (asked,) = impostor.received()
    assert asked["method"] == "GET" and asked["path"].startswith("/api/identify?nonce=")
    assert "Authorization" not in asked["headers"]
    assert SECRET not in json.dumps(asked) and "PermissionRequest" not in json.dumps(asked)


def test_a_runtime_file_whose_pid_belongs_to_another_user_is_stale() -> None:
    # To an ordinary user, kill(pid, 0) on another user's process fails with EPERM: it exists,
    # but it is not our server. Run as nobody, pid 1 (root's init) is such a process.
    # The module is standard-library only; it is passed as text to Debian's python so that
    # nobody can run it even when the checkout (and its venv) is private to us.
    module = ROOT / "server" / "sidemirror" / "core" / "process_identity.py"
    probe = module.read_text() + "\nprint(gone_reason({'pid': 1}))\n"
    argv = ["/usr/bin/python3", "-c", probe]
    if os.geteuid() == 0:
        argv = [*AS_NOBODY, *argv]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "pid 1 now belongs to another user's process (its server is gone)"


@needs_root
@pytest.mark.parametrize("command", [["token"], ["url"], ["pair"], ["status"],
                                     ["ingest", "--workspace", "/w"]], ids=lambda c: c[0])  # fmt: skip
def test_client_commands_exit_2_on_another_users_listener(
    tmp_path: Path, impostor_of_another_user: Impostor, command: list[str]
) -> None:
    impostor = impostor_of_another_user
    _runtime_file(tmp_path / "run", impostor.port)
    verb, *rest = command
    done = _sidemirror(verb, "--runtime-dir", str(tmp_path / "run"), *rest)
    assert done.returncode == 2, done.stderr
    assert f"sidemirror {verb}: not sending the token to 127.0.0.1:{impostor.port}" in done.stderr
    assert f"belongs to uid {NOBODY}, not to you" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert impostor.received() == []


@needs_root
def test_client_commands_say_a_runtime_file_is_stale_and_that_nothing_runs(
    tmp_path: Path, impostor_of_another_user: Impostor
) -> None:
    impostor = impostor_of_another_user
    path = _pid_reused_by(impostor, tmp_path / "run")
    done = _sidemirror("token", "--runtime-dir", str(tmp_path / "run"))
    assert (done.returncode, done.stdout) == (1, "")
    assert f"sidemirror token: ignoring the stale runtime file {path}" in done.stderr
    assert "Start the server with `sidemirror serve`" in done.stderr
    assert "no server is running" in done.stderr
    assert impostor.received() == []


def test_the_hook_reaches_the_real_server_through_the_check(tmp_path: Path) -> None:
    # The runtime file as `sidemirror serve` writes it passes every check: the event arrives.
    session_start = (FIXTURES / "hooks" / "permission-request.jsonl").read_text().splitlines()[0]
    with Server(tmp_path, token=None, log_level=None) as server:
        proc, port = server.proc, server.port
        assert proc is not None
        (runtime,) = (tmp_path / "run").glob("server-*.json")
        info = json.loads(runtime.read_text())
        health = json.loads(http_get(port, "/health")[1])
        assert info["pid"] == proc.pid and info["server_id"] == health["server_id"]
        if sys.platform.startswith("linux"):
            assert info["started"] == start_ticks(proc.pid) and len(info["boot_id"]) == 36
        done = _sidemirror("hook", "--runtime-dir", str(tmp_path / "run"), stdin=session_start)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        sessions = json.loads(http_get(port, "/api/attention", info["token"])[1])["sessions"]
        assert [s["session"] for s in sessions] == [json.loads(session_start)["session_id"]]
