"""`sidemirror serve` takes its port before it imports the server (listen_socket.py): a client
that connects while the server starts waits for its answer instead of being refused."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.harness.paths import ROOT
from tests.harness.ports import free_port

# Stops the real `sidemirror serve` at the moment it first imports the server's code, after
# checking from outside whether the port already accepts connections.
PROBE = r"""
import socket, sys
port = int(sys.argv[1])

class AtServerImport:
    def find_spec(self, name, path=None, target=None):
        if name == "sidemirror.cli.serving":
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    print("accepting before the server is imported", flush=True)
            except OSError as exc:
                print(f"refused: {exc}", flush=True)
            sys.exit(7)
        return None

sys.meta_path.insert(0, AtServerImport())
from sidemirror.cli import main
sys.exit(main(["serve", "--port", str(port), "--data-dir", sys.argv[2],
               "--runtime-dir", sys.argv[3], "--claude-dir", sys.argv[4],
               "--codex-dir", sys.argv[4]]))
"""


def test_the_port_accepts_connections_before_the_server_is_imported(tmp_path: Path) -> None:
    port = free_port()
    empty = tmp_path / "none"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(port), str(tmp_path / "data"), str(tmp_path / "run"),
         str(empty)],
        cwd=ROOT / "server", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 7, result.stderr
    assert result.stdout.strip() == "accepting before the server is imported"
    # The process is gone, and with it the port: nothing was left listening.
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
