"""One `sidemirror forward` process outlives restarts of the server it sends to: it waits for the
server to come back, says why on stderr, and resumes where the server's mirror ends. Every line
the agent wrote (before, during and between the restarts) arrives exactly once, in order; and the
listing says whether the host's forwarder is there, and since when."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from sidemirror.forward_files import read_forward_token

from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.forwarding import Forwarder, mirror_of

CWD = "/home/dev/app"
LABEL = "devbox"


def _prompt(n: int) -> bytes:
    record = {"type": "user", "cwd": CWD, "sessionId": "s1", "uuid": f"u{n}",
              "timestamp": "2026-12-01T10:00:00.000Z",
              "message": {"role": "user", "content": f"prompt {n}"}}  # fmt: skip
    return json.dumps(record).encode() + b"\n"


class Agent(threading.Thread):
    """Appends a prompt to its transcript every 20 ms, as an agent goes on working whatever the
    server does, until stopped."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.written = 0
        self.stop = threading.Event()

    def run(self) -> None:
        with self.path.open("ab") as f:
            while not self.stop.wait(0.02):
                f.write(_prompt(self.written))
                f.flush()
                self.written += 1


def _host(server: Server) -> dict[str, Any] | None:
    workspaces = server.get("/api/workspaces")["workspaces"]
    ws = next((w for w in workspaces if w["directory"] == f"{LABEL}:{CWD}"), None)
    return None if ws is None else ws["host"]


def _prompts(server: Server) -> list[str]:
    workspaces = server.get("/api/workspaces")["workspaces"]
    ws = next(w for w in workspaces if w["directory"] == f"{LABEL}:{CWD}")
    items = server.snapshot(ws["id"], "s1")["items"]
    return [i["content"] for i in items if i["type"] == "user"]


def test_one_forwarder_survives_two_server_restarts_with_every_line_once_in_order(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path / "local", same_port=True)
    claude = tmp_path / "remote" / ".claude" / "projects"
    transcript = claude / "-home-dev-app" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    agent = Agent(transcript)
    fwd = Forwarder(tmp_path / "remote", server, LABEL, claude)
    mirror = mirror_of(server, LABEL, transcript, claude)

    def mirrored() -> int:
        return mirror.read_bytes().count(b"\n") if mirror.exists() else 0

    try:
        server.start()
        fwd.start()
        agent.start()
        for restart in (1, 2):
            wait_until(lambda r=restart: mirrored() > 20 * r, 60, "lines mirrored")  # noqa: B023
            connected = wait_until(lambda: (_host(server) or {}).get("connected"), 30, "host")
            assert connected is True
            server.stop()
            # The agent goes on writing while no server listens.
            down = agent.written
            wait_until(lambda d=down: agent.written >= d + 10, 30, "lines written while down")  # noqa: B023
            server.start()
            assert fwd.proc is not None and fwd.proc.poll() is None, fwd.log()
        at_restart = agent.written
        wait_until(lambda: mirrored() > at_restart, 60, "lines after the second restart")
        agent.stop.set()
        agent.join(5)
        wait_until(lambda: mirror.read_bytes() == transcript.read_bytes(), 60, fwd.log()[-2000:])
        expected = [f"prompt {n}" for n in range(agent.written)]
        wait_until(lambda: _prompts(server) == expected, 60, "every prompt in the session")
        assert fwd.proc is not None and fwd.proc.poll() is None  # the same process throughout
        log = fwd.log()
        assert log.count("retrying in") >= 2, log  # it said why, each time
        assert "connection lost" in log, log
        token = read_forward_token(server.data)
        assert token and token not in log and token not in server.stderr()

        # The forwarder gone: the host is shown disconnected, with since when.
        fwd.stop()
        host = wait_until(lambda: (h := _host(server)) and not h["connected"] and h, 30, "gone")
        assert host["label"] == LABEL and host["since"] is not None
    finally:
        agent.stop.set()
        fwd.stop()
        server.stop()
