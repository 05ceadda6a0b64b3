"""Ctrl-C stops `sidemirror serve` at once even while a `sidemirror forward` holds its WebSocket
open on the forward socket: the server closes that socket itself rather than waiting for the
forwarder to hang up (which it never does: it waits for acks)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from sidemirror.runtime_file import runtime_file_name

from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.forwarding import Forwarder, mirror_of

CWD = "/home/dev/app"
LABEL = "devbox"


def test_sigint_exits_within_a_second_with_a_forwarder_connected(tmp_path: Path) -> None:
    server = Server(tmp_path / "local")
    claude = tmp_path / "remote" / ".claude" / "projects"
    transcript = claude / "-home-dev-app" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    record = {"type": "user", "cwd": CWD, "sessionId": "s1", "uuid": "u1",
              "timestamp": "2026-12-01T10:00:00.000Z",
              "message": {"role": "user", "content": "hello"}}  # fmt: skip
    transcript.write_text(json.dumps(record) + "\n")
    fwd = Forwarder(tmp_path / "remote", server, LABEL, claude)
    mirror = mirror_of(server, LABEL, transcript, claude)
    runtime = server.tmp / "run" / runtime_file_name(server.data)
    try:
        server.start()
        fwd.start()
        wait_until(lambda: mirror.exists() and mirror.read_bytes() == transcript.read_bytes(), 30,
                 "the transcript mirrored")  # fmt: skip

        def connected() -> bool:
            hosts = [w["host"] for w in server.get("/api/workspaces")["workspaces"]]
            return any(h and h["label"] == LABEL and h["connected"] for h in hosts)

        wait_until(connected, 30, "the forwarder shown connected")
        assert runtime.exists()
        assert server.proc is not None
        started = time.monotonic()
        server.proc.send_signal(signal.SIGINT)
        code = server.proc.wait(10)
        took = time.monotonic() - started
        assert took < 1.0, f"took {took:.2f} s to stop: {server.stderr()[-2000:]}"
        assert code == 0, server.stderr()[-2000:]
        assert not runtime.exists()
    finally:
        fwd.stop()
        server.stop()
