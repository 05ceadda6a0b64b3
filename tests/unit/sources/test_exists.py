"""`python -m sidemirror.sources.exists`, which `scripts/serve` asks before adding the demo: no
sessions, the demo; once a real one exists (in the dirs `serve` is given), no demo at the next
start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.harness.paths import FIXTURES, ROOT

TRANSCRIPT = FIXTURES / "claude" / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


def _exists(tmp_path: Path, *args: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT / "server"))
    cmd = [sys.executable, "-m", "sidemirror.sources.exists", *args]
    return subprocess.run(cmd, env=env, check=False, timeout=60).returncode


def test_the_demo_is_added_until_a_real_session_exists_in_the_dirs_serve_reads(
    tmp_path: Path,
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    # As scripts/serve passes its arguments on: other flags (and their values) are ignored.
    args = ("--port", "47475", "--claude-dir", str(claude), "--codex-dir", str(codex))
    assert _exists(tmp_path, *args) == 1  # nothing real: scripts/serve adds --demo
    (claude / "-path-to-Demo").mkdir()
    shutil.copyfile(TRANSCRIPT, claude / "-path-to-Demo" / TRANSCRIPT.name)
    assert _exists(tmp_path, *args) == 0  # a real session: the next start has no demo
    assert _exists(tmp_path) == 1  # the default dirs (an empty home) still hold none
