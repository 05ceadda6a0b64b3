"""Files named like transcripts that are not regular files (a FIFO, above all) never freeze the
server: at start and while it runs, `/health` answers, a real session still mirrors live, the
file is counted with a reason in `parse_errors_detail`, and SIGTERM stops the process in ≤ 2 s.

Opening a FIFO for reading blocks until a writer appears; before the sources opened files
non-blocking, one FIFO in a project folder held the startup scan (the port bound, nothing
answering) or the watcher (every session stopped updating), and the blocked thread kept the
process alive after SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.paths import ROOT
from tests.harness.server import Server
from tests.harness.waiting import until, wait_until
from tests.reliability.harness import MID_SESSION, Mirror, canon, fixture_lines

from .report import record
from .test_crash_restart import ws_id

SPLIT = 20
LINES = fixture_lines(MID_SESSION)
SID = MID_SESSION.stem
CLAUDE_WS = ws_id("/path/to/Demo")
SIGTERM_LIMIT_S = 2.0


def _health_answers(server: Server) -> bool:
    return server.health()["status"] == "ok"


def _sigterm_seconds(server: Server) -> float:
    assert server.proc is not None
    t0 = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(10)
    except Exception:  # still blocked: measured as what it is, then killed
        server.proc.kill()
        server.proc.wait(5)
        return float("inf")
    return time.monotonic() - t0


def _status(server: Server) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    cmd = [sys.executable, "-m", "sidemirror", "status", "--runtime-dir", str(server.tmp / "run")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


def _special_files(project: Path, rollouts: Path, tag: str) -> socket.socket:
    """A FIFO in the Claude project and in the Codex sessions folder, a socket and a folder,
    all named like transcripts."""
    os.mkfifo(project / f"fifo-{tag}.jsonl")
    os.mkfifo(rollouts / f"rollout-2026-01-02T00-00-00-{tag}.jsonl")
    (project / f"folder-{tag}.jsonl").mkdir()
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(project / f"socket-{tag}.jsonl"))
    return unix


@pytest.mark.parametrize("when", ["at_start", "while_running"])
async def test_special_files_named_like_transcripts_never_block(tmp_path: Path, when: str) -> None:
    server = Server(tmp_path)
    project = server.claude / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / MID_SESSION.name
    path.write_bytes(b"".join(LINES[:SPLIT]))
    rollouts = tmp_path / "codex" / "sessions" / "2026" / "01" / "02"
    rollouts.mkdir(parents=True)
    sockets = [_special_files(project, rollouts, "start")] if when == "at_start" else []
    stop = asyncio.Event()
    mirror = Mirror(server, f"/workspace/{CLAUDE_WS}/session/stream?session={SID}&limit=10000")
    task: asyncio.Task[None] | None = None
    health_s = seconds = float("inf")
    try:
        server.start()
        t0 = time.monotonic()
        wait_until(lambda: _health_answers(server), 15, "/health")
        health_s = time.monotonic() - t0
        before = wait_until(lambda: server.snapshot(CLAUDE_WS, SID)["total"], 15, "session indexed")
        task = asyncio.create_task(mirror.run(stop))
        assert await until(lambda: mirror.connects > 0, 10, step=0.05)
        if when == "while_running":
            sockets.append(_special_files(project, rollouts, "later"))

        def counted() -> list[dict[str, Any]] | None:
            detail: list[dict[str, Any]] = server.health()["parse_errors_detail"]
            return detail if len(detail) >= 4 else None

        detail = wait_until(counted, 15, "the special files counted")
        tag = "start" if when == "at_start" else "later"
        by_name = {Path(d["file"]).name: d["reason"] for d in detail}
        assert by_name == {
            f"fifo-{tag}.jsonl": "not a regular file (FIFO)",
            f"rollout-2026-01-02T00-00-00-{tag}.jsonl": "not a regular file (FIFO)",
            f"folder-{tag}.jsonl": "not a regular file (directory)",
            f"socket-{tag}.jsonl": "not a regular file (socket)",
        }, detail
        assert server.health()["parse_errors"] == 4
        status = _status(server)  # the same, as `sidemirror status` prints it
        assert "4 parse error(s)" in status and "latest parse errors (newest first):" in status
        assert f"{project / f'fifo-{tag}.jsonl'}: not a regular file (FIFO)" in status, status
        with path.open("ab") as fh:
            fh.write(b"".join(LINES[SPLIT:]))

        async def mirrored() -> bool:
            fresh = (await asyncio.to_thread(server.snapshot, CLAUDE_WS, SID))["items"]
            grown = len(fresh) > before  # the append read (a snapshot before it matches too)
            return grown and [canon(i) for i in mirror.items] == [canon(i) for i in fresh]

        # Every line appended after the special files appeared reaches the open stream.
        assert await until(mirrored, 30), "live mirroring stopped"
        assert len(mirror.items) > before

    finally:
        stop.set()
        if task is not None:
            await asyncio.wait_for(task, 10)
        if server.alive():
            seconds = _sigterm_seconds(server)
        for unix in sockets:
            unix.close()
    record(
        f"special files named *.jsonl (FIFO, socket, folder), {when.replace('_', ' ')}",
        {"health_after_listen_s": round(health_s, 2), "sigterm_exit_s": round(seconds, 2)},
        trials=1,
    )
    assert seconds <= SIGTERM_LIMIT_S, f"SIGTERM took {seconds:.2f}s"
    assert server.proc is not None and server.proc.returncode == 0
