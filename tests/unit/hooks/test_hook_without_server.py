"""With no server, `sidemirror hook` prints nothing and exits 0: Claude Code carries on as if it
were not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sidemirror.runtime_file import write_runtime_file

from tests.harness.paths import FIXTURES
from tests.harness.ports import free_port

SIDEMIRROR = Path(sys.executable).with_name("sidemirror")
EVENT = (FIXTURES / "hooks" / "permission-request.jsonl").read_text().splitlines()[-1]


def _hook(runtime_dir: Path, stdin: str = EVENT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIDEMIRROR), "hook", "--runtime-dir", str(runtime_dir)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_no_runtime_file(tmp_path: Path) -> None:
    done = _hook(tmp_path / "nothing-here")
    assert (done.returncode, done.stdout) == (0, "")


def test_a_stale_runtime_file(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    write_runtime_file(tmp_path / "run", {"port": port, "token": "t", "pid": 1})
    done = _hook(tmp_path / "run")
    assert (done.returncode, done.stdout) == (0, "")


def test_input_that_is_not_json(tmp_path: Path) -> None:
    port = free_port()
    write_runtime_file(tmp_path / "run", {"port": port, "token": "t", "pid": 1})
    for stdin in ("", "not json", json.dumps([1, 2])):
        done = _hook(tmp_path / "run", stdin)
        assert (done.returncode, done.stdout) == (0, "")


def test_a_runtime_file_of_someone_else_is_not_used(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_runtime_file(run, {"port": 1, "token": "t", "pid": 1})
    run.chmod(0o777)  # writable by anyone: not certainly ours
    done = _hook(run)
    assert (done.returncode, done.stdout) == (0, "")
    assert "refusing" in done.stderr
