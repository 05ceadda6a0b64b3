"""The command hook, talking to a real server, loads neither `http.client` (which loads `ssl`
and `email`: more instructions than the rest of the hook) nor `typing`
(loopback_http.py; figures in docs/benchmarks.md), and the event still arrives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.harness.cli import clean_env
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.server.attention.hook_support import SESSION, event

HEAVY = ("http.client", "ssl", "email", "typing")


def test_the_hook_reaches_the_server_without_http_client_ssl_or_typing(tmp_path: Path) -> None:
    with Server(tmp_path / "server") as server:
        probe = (
            "import io, sys\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))\n"
            "from sidemirror.hooks.hook_command import run\n"
            "code = run(['--runtime-dir', sys.argv[1]])\n"
            f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        )
        payload = json.dumps(event("UserPromptSubmit"))
        done = subprocess.run(
            [sys.executable, "-c", probe, str(server.runtime_dir), payload],
            capture_output=True, text=True, env=clean_env(), timeout=60,
        )  # fmt: skip
        assert done.stdout.strip() == "0 []", done.stderr

        def arrived() -> bool:
            rows = server.get("/api/attention")["sessions"]
            return any(r["session"] == SESSION and r["state"] == "running" for r in rows)

        wait_until(arrived, what="the event the hook sent")
