"""`sidemirror statusline run`, the real process, fed the JSON Claude Code documents for a status
line command (tests/fixtures/statusline/), against a real server: it prints a line first, and
the server then holds the agent's own figures for the session, for the panel's gauge."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.auth import AUTH
from tests.harness.cli import clean_env
from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until

PAYLOAD = (FIXTURES / "statusline" / "claude-code-2.1.90.json").read_bytes()
SESSION = json.loads(PAYLOAD)["session_id"]
SIDEMIRROR = str(Path(sys.executable).with_name("sidemirror"))


def _statusline(runtime_dir: Path, *extra: str) -> tuple[subprocess.CompletedProcess[bytes], float]:
    start = time.monotonic()
    done = subprocess.run(
        [SIDEMIRROR, "statusline", "run", "--runtime-dir", str(runtime_dir), *extra],
        input=PAYLOAD, capture_output=True, env=clean_env(), timeout=60,
    )  # fmt: skip
    return done, time.monotonic() - start


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with Server(tmp_path / "server") as server:
        yield server


def _figures(server: Server) -> Any:
    return server.get(f"/api/statusline/claude?session={SESSION}")["figures"]


def test_the_status_line_prints_and_the_server_gets_the_agents_own_figures(
    served: Server,
) -> None:
    assert _figures(served) is None
    done, _ = _statusline(served.runtime_dir)
    assert done.returncode == 0
    assert done.stdout.decode() == "Opus · context 8% · $0.01 · 5h 24% · 7d 41%\n"
    wait_until(lambda: _figures(served) is not None, what="the status line's report")
    figures = _figures(served)
    assert figures["context"] == {
        "used_tokens": 15500,  # input + cache write + cache read of the last request
        "window_tokens": 200000,
        "used_percentage": 8,
    }
    assert figures["cost_usd"] == 0.01234
    assert figures["rate_limits"] == {
        "five_hour": {"used_percentage": 23.5, "resets_at": 1738425600},
        "seven_day": {"used_percentage": 41.2, "resets_at": 1738857600},
    }
    assert (figures["model"], figures["version"], figures["source"]) == (
        "claude-opus-4-8",
        "2.1.90",
        "statusline",
    )


def test_the_users_status_line_still_prints_what_it_printed(served: Server) -> None:
    # The wrapped command gets Claude Code's JSON on stdin, as it did before the wrap.
    theirs = 'printf "mine: "; head -c 1; echo; cat > /dev/null'
    done, _ = _statusline(served.runtime_dir, "--wrap", theirs)
    assert done.stdout.decode() == "mine: {\n" and done.returncode == 0
    wait_until(lambda: _figures(served) is not None, what="the report, with a wrapped command")


def test_with_no_server_it_still_prints_at_once(tmp_path: Path) -> None:
    done, took = _statusline(tmp_path / "no-server")
    assert done.returncode == 0
    assert done.stdout.decode().startswith("Opus · context 8%")
    assert took < 10  # a process start; nothing waits for a server


def test_a_hung_server_does_not_hold_the_status_line(served: Server) -> None:
    served.proc.send_signal(19)  # SIGSTOP: the port accepts, nobody answers
    try:
        done, took = _statusline(served.runtime_dir)
        assert done.stdout.decode().startswith("Opus")
        assert took < 10 and done.returncode == 0
    finally:
        served.proc.send_signal(18)  # SIGCONT


def test_a_report_needs_the_token_and_a_session(served: Server) -> None:
    post = {"Content-Type": "application/json"}
    assert served.exchange("POST", "/api/statusline/claude", PAYLOAD, post).status == 401
    no_session = json.dumps({"model": {"id": "x"}}).encode()
    bad = served.exchange("POST", "/api/statusline/claude", no_session, {**post, **AUTH})
    assert bad.status == 400
