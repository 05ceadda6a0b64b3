"""`sidemirror hook` as Claude Code runs it: a real process, one event's JSON on stdin, pointed at
a test server's runtime folder; what it prints, and its exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.harness.paths import ROOT


def start_hook(runtime_dir: Path, payload: dict[str, Any], *flags: str) -> subprocess.Popen[str]:
    """The hook with `payload` on stdin; `flags` go after `--runtime-dir` (an agent's own)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}  # this checkout's code
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidemirror", "hook", "--runtime-dir", str(runtime_dir), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    return proc


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """The hook's exit code and what it printed on stdout, once it ends."""
    assert proc.stdout is not None
    out = proc.stdout.read()
    return proc.wait(30), out


def decided(behavior: str = "allow", **decision: Any) -> dict[str, Any]:
    """What the hook prints for a PermissionRequest the panel decided: Claude Code's documented
    decision output (Codex reads the same shape), with the decision's own fields."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, **decision},
        }
    }
