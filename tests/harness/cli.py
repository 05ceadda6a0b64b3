"""The `sidemirror` command as a user runs it, in an environment that is the test's alone."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.harness.paths import ROOT

OURS = ("SIDEMIRROR", "XDG_DATA_HOME", "XDG_RUNTIME_DIR")


def clean_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without the developer's Sidemirror settings (SIDEMIRROR_*,
    and XDG_DATA_HOME, which moves the default data dir), importing this checkout's server, with
    HOME at `home` if given, and `extra` on top."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SIDEMIRROR") and k != "XDG_DATA_HOME"
    }
    env["PYTHONPATH"] = str(ROOT / "server")
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra)
    return env


def run_cli(
    *argv: str, home: Path | None = None, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """`sidemirror ARGV` to its end: its exit code, stdout and stderr (text)."""
    return subprocess.run(
        [sys.executable, "-m", "sidemirror", *argv],
        env=clean_env(home, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def http_get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    """GET on 127.0.0.1:`port`: the status and body, an error status included."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
