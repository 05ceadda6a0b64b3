"""Clients use a runtime file only if it is ours: otherwise a clear message and exit status 2,
before anything is sent (runtime.py, cli/__init__.py, clients/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sidemirror.cli import main as cli_main
from sidemirror.runtime_file import write_runtime_file

from tests.conftest import ROOT

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
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "sidemirror", "serve", "--port", "0", "--runtime-dir",
         str(run / "link"), "--data-dir", str(tmp_path / "d"), "--claude-dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"refusing to use {run / 'link'}: it is a symbolic link" in proc.stderr
    assert not list(target.iterdir())
