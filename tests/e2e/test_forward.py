"""A session from another machine, sent by `sidemirror forward`, in the real panel with its host
label, and marked disconnected once its forwarder is gone: the remote side is a separate HOME
whose forwarder process talks to the local server."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_acp_session import port_outside_the_range

from tests.e2e.support import FIXTURES
from tests.harness.browser import Extension
from tests.harness.paths import ROOT

LABEL = "devbox"


def test_a_forwarded_session_shows_with_its_host_label(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    local_claude = tmp_path / "local-claude"
    local_claude.mkdir()
    server = server_factory(port_outside_the_range(), local_claude)
    remote = tmp_path / "remote-home"
    remote_claude = remote / ".claude" / "projects"
    shutil.copytree(FIXTURES / "claude", remote_claude)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEMIRROR")}
    env.update(PYTHONPATH=str(ROOT / "server"), HOME=str(remote))
    # As docs/remote.md says: the forward socket's path and the forward token, from the CLI.
    which = ["--runtime-dir", str(server.tmp / "runtime"), "--data-dir", str(server.tmp / "data")]
    sock = _cli(env, "url", "--forward", *which)
    token_file = remote / "token"
    token_file.write_text(_cli(env, "token", "--forward", *which))
    token_file.chmod(0o600)
    cmd = [
        sys.executable, "-m", "sidemirror", "forward", "--to", f"unix:{sock}",
        "--token-file", str(token_file), "--label", LABEL,
    ]  # fmt: skip
    log = (tmp_path / "forward.log").open("wb")
    forwarder = subprocess.Popen(
        cmd, env=env, stdout=log, stderr=log, cwd=remote, start_new_session=True
    )
    try:
        panel = ext.open_panel()
        ext.use_port(panel, server.port)
        picker = panel.locator("#ws-select option:not([value=''])", has_text=f"{LABEL}:")
        expect(picker.first).to_be_attached(timeout=30_000)
        assert (picker.first.get_attribute("title") or "").startswith(f"{LABEL}:/")
        expect(panel.locator(".feed [data-type=user]").first).to_be_visible(timeout=30_000)
        expect(picker.first).not_to_contain_text("disconnected")

        # The forwarder gone (its SSH session ended): the host's workspaces say so, with the
        # time since, where they would otherwise only look idle.
        os.killpg(forwarder.pid, signal.SIGTERM)
        forwarder.wait(10)
        expect(picker.first).to_contain_text("disconnected just now)", timeout=30_000)
    finally:
        if forwarder.poll() is None:
            os.killpg(forwarder.pid, signal.SIGTERM)
            forwarder.wait(10)
        log.close()


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sidemirror", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()
