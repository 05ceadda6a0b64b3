"""Two machines on one: a remote side (its own HOME and agent folders) whose `sidemirror forward`
process sends to a local server started by the harness, and a reference server that reads the
remote files directly — what "a local read" of them gives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from sidemirror.forward_files import forward_socket_path, read_forward_token

from tests.harness.paths import ROOT
from tests.harness.server import Server
from tests.harness.waiting import wait_until


class Forwarder:
    """`sidemirror forward` in its own process group and HOME, killed (-9) and restarted at will."""

    def __init__(self, remote: Path, server: Server, label: str, claude: Path, *args: str) -> None:
        self.remote = remote  # the remote machine's HOME
        self.remote.mkdir(parents=True, exist_ok=True)
        self.claude = claude  # its Claude Code projects folder
        self.server = server
        self.label = label
        self.args = args
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        """Forward to the server's forward socket with its forward token (the server made both
        when it first started)."""
        self.starts += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEMIRROR")}
        token = read_forward_token(self.server.data)
        assert token, "the server has no forward token yet"
        env.update(
            PYTHONPATH=str(ROOT / "server"), HOME=str(self.remote), SIDEMIRROR_FORWARD_TOKEN=token
        )
        sock = forward_socket_path(self.server.tmp / "run", self.server.data)
        cmd = [
            sys.executable, "-m", "sidemirror", "forward", "--to", f"unix:{sock}",
            "--label", self.label, "--claude-dir", str(self.claude), *self.args,
        ]  # fmt: skip
        log = (self.remote / f"forward.{self.starts}.log").open("wb")
        with log:
            self.proc = subprocess.Popen(
                cmd, env=env, stdout=log, stderr=log, cwd=self.remote, start_new_session=True
            )

    def kill9(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()

    def log(self) -> str:
        return "".join(
            p.read_text(errors="replace") for p in sorted(self.remote.glob("forward.*.log"))
        )


def mirror_of(server: Server, label: str, remote_file: Path, remote_claude: Path) -> Path:
    return server.data / "remote" / label / "claude" / remote_file.relative_to(remote_claude)


def wait_mirrored(server: Server, fwd: Forwarder, files: list[Path], timeout: float) -> None:
    """Until every remote file's bytes are in the mirror, exactly."""

    def same() -> bool:
        for path in files:
            copy = mirror_of(server, fwd.label, path, fwd.claude)
            if not copy.exists() or copy.read_bytes() != path.read_bytes():
                return False
        return True

    wait_until(same, timeout, f"mirror equal to the remote files\n{fwd.log()[-2000:]}")


def session_items(server: Server, directory: str, session: str) -> list[dict[str, Any]]:
    """A session's whole log, by workspace directory (ids without their epoch)."""
    workspaces = server.get("/api/workspaces")["workspaces"]
    ws = next(w for w in workspaces if w["directory"] == directory)
    items = server.snapshot(ws["id"], session)["items"]
    return [{**i, "id": i["id"].rpartition(".")[2]} for i in items]
