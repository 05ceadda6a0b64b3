"""A transcript that stopped mid-turn is idle after the idle time, and stays idle across a
restart of the real `sidemirror serve` process: in the sessions listing, `/api/workspaces` and
the attention listing (the Sessions view), idle since its last write, not running since the
restart (docs/api.md, Session states). `--idle-time 3` keeps the wait short."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from sidemirror.core.store import workspace_id_for

from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.server.sources.test_agent_start import agent_binary

from .harness import CLAUDE_FIX, claude_project

SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
TRANSCRIPT = CLAUDE_FIX / "sample-project" / f"{SESSION}.jsonl"
WS = workspace_id_for("/path/to/Demo")
# The prompt, a reply and a tool call with no result: the agent stopped mid-turn.
MID_TURN = TRANSCRIPT.read_bytes().splitlines(keepends=True)[:4]


def _row(server: Server, ws: str = WS) -> dict[str, Any] | None:
    try:
        rows = server.get(f"/workspace/{ws}/sessions")["sessions"]
    except OSError:  # not listed yet (404)
        return None
    return next((r for r in rows if r["id"] == SESSION), None)


def _state(server: Server, ws: str = WS) -> tuple[str, bool] | None:
    row = _row(server, ws)
    return None if row is None else (row["state"], row["exact"])


def _workspace_active(server: Server, ws: str = WS) -> bool:
    rows = server.get("/api/workspaces")["workspaces"]
    return bool(next(w for w in rows if w["id"] == ws)["active"])


def _attention(server: Server) -> dict[str, Any] | None:
    rows = server.get("/api/attention")["sessions"]
    return next((r for r in rows if r["session"] == SESSION), None)


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_a_session_stopped_mid_turn_is_idle_and_stays_idle_after_a_restart(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path, "--idle-time", "3")
    transcript = claude_project(server) / TRANSCRIPT.name
    transcript.touch()
    with server:
        with transcript.open("ab") as fh:  # appended while the server tails it
            for line in MID_TURN:
                fh.write(line)
                fh.flush()
        wait_until(lambda: _state(server) == ("running", False), 15, "running, inferred")
        assert _workspace_active(server) is True
        wait_until(lambda: _state(server) == ("idle", False), 15, "idle after the idle time")
        assert _workspace_active(server) is False
        row = _attention(server)
        assert row is not None and (row["state"], row["exact"]) == ("idle", False)
    last_write = transcript.stat().st_mtime

    server.start()
    try:
        # Listed from the index, then read (a snapshot) the way the panel opens it: a
        # mid-turn file, but no agent and no write since: idle, never running since the start.
        wait_until(lambda: _row(server) is not None, 15, "the session listed again")
        assert _state(server) == ("idle", False)
        server.snapshot(WS, SESSION)
        assert _state(server) == ("idle", False)
        assert _workspace_active(server) is False
        row = _attention(server)
        assert row is not None and (row["state"], row["exact"]) == ("idle", False)
        assert _epoch(row["since"]) <= last_write + 0.01  # idle since its last write
    finally:
        server.stop()


def test_a_session_stopped_mid_turn_long_ago_is_idle_from_the_start(tmp_path: Path) -> None:
    """The issue's case: a transcript last written 25 minutes ago, read at the default idle
    time (two minutes), is idle, "for 25 m" in the Sessions view."""
    server = Server(tmp_path)
    transcript = claude_project(server) / TRANSCRIPT.name
    transcript.write_bytes(b"".join(MID_TURN))
    written = time.time() - 25 * 60
    os.utime(transcript, (written, written))
    with server:
        wait_until(lambda: _row(server) is not None, 15, "the session listed")
        server.snapshot(WS, SESSION)
        assert _state(server) == ("idle", False)
        row = _attention(server)
        assert row is not None and row["state"] == "idle"
        assert abs(_epoch(row["since"]) - written) < 1


def test_a_live_agent_keeps_its_session_running_then_it_exits_and_the_session_is_idle(
    tmp_path: Path,
) -> None:
    """The process half of the rule, and the start: a transcript last written ten minutes ago
    (far past the idle time) whose agent process still runs in its directory is running, read
    at the start without a client asking; once the agent exits, it is idle."""
    project = tmp_path / "project"
    project.mkdir()
    server = Server(tmp_path, "--idle-time", "3")
    transcript = claude_project(server, "-project") / TRANSCRIPT.name
    lines = [json.dumps({**json.loads(line), "cwd": str(project)}) + "\n" for line in MID_TURN]
    transcript.write_text("".join(lines))
    written = time.time() - 10 * 60
    os.utime(transcript, (written, written))
    ws = workspace_id_for(str(project))
    # An agent process (named `claude`, as procs.py looks for) at work in the project.
    agent = subprocess.Popen([str(agent_binary(tmp_path, "claude")), "120"], cwd=project)
    try:
        with server:
            wait_until(lambda: _state(server, ws) == ("running", False), 20, "running, agent alive")
            assert _workspace_active(server, ws) is True
            agent.terminate()
            agent.wait(10)
            wait_until(lambda: _state(server, ws) == ("idle", False), 20, "idle once it exited")
            assert _workspace_active(server, ws) is False
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait(10)


def _hook_events() -> list[dict[str, Any]]:
    """Claude Code's recorded hook events up to its PreToolUse: the agent is at work."""
    lines = (FIXTURES / "hooks" / "permission-request.jsonl").read_text().splitlines()
    recorded = [json.loads(line) for line in lines]
    names = [e["hook_event_name"] for e in recorded]
    return recorded[: names.index("PreToolUse") + 1]


def _post_hooks(server: Server, hooks: list[dict[str, Any]]) -> None:
    for hook in hooks:
        assert server.post_json("/api/hooks/claude", hook) == {"output": None}


def test_a_session_known_only_from_hooks_is_idle_after_the_idle_time_and_a_restart(
    tmp_path: Path,
) -> None:
    """No transcript is read for it (none in the Claude dir), only its hooks: running since
    its PreToolUse (exact); with no agent process and no hook for the idle time, idle
    (inferred); after a restart, never running again until a hook says so."""
    server = Server(tmp_path, "--idle-time", "3")
    hooks = _hook_events()
    with server:
        _post_hooks(server, hooks)
        row = _attention(server)
        assert row is not None and (row["state"], row["exact"]) == ("running", True)
        hooked = time.time()
        wait_until(
            lambda: (_attention(server) or {}).get("state") == "idle",
            20,
            "idle after the idle time",
        )
        row = _attention(server)
        assert row is not None and row["exact"] is False
        assert time.time() - hooked >= 3
        assert _epoch(row["since"]) <= hooked  # idle since its last hook
        assert server.get("/api/workspaces")["workspaces"] == []  # still no transcript
    server.start()
    try:
        row = _attention(server)
        assert row is None or row["state"] == "idle"
        _post_hooks(server, hooks[-1:])  # the agent is at work again
        row = _attention(server)
        assert row is not None and (row["state"], row["exact"]) == ("running", True)
        wait_until(lambda: (_attention(server) or {}).get("state") == "idle", 20, "idle again")
    finally:
        server.stop()
