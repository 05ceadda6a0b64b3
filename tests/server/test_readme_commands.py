"""README command 1 on a fresh machine, then the README's commands in a new login shell, pasted
as printed: `scripts/serve` links `sidemirror` into ~/.local/bin and says so (with the line to
add to the profile when a login shell would not find it); then `sidemirror status`,
`sidemirror token` and the `claude mcp add` line work, and without a server that line sends no
empty token.

"Fresh" means a new HOME and an environment with nothing in it (`env -i`), so no runtime folder,
data dir, profile or PATH entry of the machine's user is seen. The venv is the suite's own
(SIDEMIRROR_VENV, as a user who ran `scripts/test` first has it): creating one is what
`scripts/serve` does when there is none, and takes minutes of pip here.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.harness.paths import ROOT
from tests.harness.ports import free_port

VENV = Path(sys.prefix)
FAKE_CLAUDE = """#!/bin/sh
# Stands in for Claude Code's CLI: records its arguments, as JSON, one call per line.
python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@" >> "$HOME/claude-calls"
"""


def _readme_mcp_line() -> str:
    """The README's `claude mcp add` command, as a user would copy it from the commands table."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = {m for m in re.findall(r"`([^`]*claude mcp add[^`]*)`", readme)}
    return line


def _login_shell(home: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A new terminal: a login shell with an empty environment but HOME."""
    return subprocess.run(
        ["env", "-i", f"HOME={home}", "bash", "-lc", command],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _mcp_initialize(url: str, token: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "readme-test", "version": "0"}}}  # fmt: skip
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as resp:
        return int(resp.status)


def test_readme_command_1_then_the_commands_in_a_new_login_shell(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()  # never 47470: a user's own server may be there
    err_log = tmp_path / "serve.err"
    with err_log.open("w") as err:
        serve = subprocess.Popen(
            ["env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin", f"SIDEMIRROR_VENV={VENV}",
             "bash", str(ROOT / "scripts" / "serve"), "--port", str(port)],
            stdout=subprocess.PIPE, stderr=err, text=True,
        )  # fmt: skip
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        assert f"listening on http://127.0.0.1:{port}" in first, err_log.read_text()
        said = err_log.read_text()
        link = home / ".local" / "bin" / "sidemirror"
        assert f"Installed the `sidemirror` command: ~/.local/bin/sidemirror → {VENV}" in said
        assert link.resolve() == (VENV / "bin" / "sidemirror").resolve()

        # No profile in this HOME puts ~/.local/bin on PATH: the output says which line to add
        # where; the user does exactly that.
        match = re.search(r"Add this line to (\S+) and open a new terminal:\n\s+(.+)\n", said)
        assert match is not None, said
        profile = Path(match.group(1).replace("~", str(home), 1))
        assert profile == home / ".profile"
        assert _login_shell(home, "command -v sidemirror").returncode == 1  # before: not found
        with profile.open("a") as fh:
            fh.write(match.group(2) + "\n")

        status = _login_shell(home, "sidemirror status")
        assert status.returncode == 0, status.stderr
        assert f"on port {port} " in status.stdout and "workspace(s)" in status.stdout
        token = _login_shell(home, "sidemirror token")
        assert token.returncode == 0, token.stderr
        (runtime,) = (home / ".cache" / "sidemirror" / "run").glob("server-*.json")
        assert token.stdout.strip() == json.loads(runtime.read_text())["token"]

        fake = home / ".local" / "bin" / "claude"
        fake.write_text(FAKE_CLAUDE)
        fake.chmod(0o755)
        pasted = _login_shell(home, _readme_mcp_line())
        assert pasted.returncode == 0, pasted.stderr
        (call,) = [json.loads(x) for x in (home / "claude-calls").read_text().splitlines()]
        url = f"http://127.0.0.1:{port}/mcp"
        header = f"Authorization: Bearer {token.stdout.strip()}"
        assert call == ["mcp", "add", "--transport", "http", "sidemirror", url, "--header", header]
        assert _mcp_initialize(url, token.stdout.strip()) == 200  # what claude was given works
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(20)

    # The server is gone: the same line is an error on stderr, and claude is never called with
    # an empty token.
    (home / "claude-calls").unlink()
    pasted = _login_shell(home, _readme_mcp_line())
    assert pasted.returncode != 0
    assert "no server is running (start it with: sidemirror serve)" in pasted.stderr
    assert not (home / "claude-calls").exists()


def test_the_command_is_linked_once_and_an_existing_one_is_respected(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    # A login profile like Debian's: ~/.local/bin joins PATH at login when it exists.
    (home / ".profile").write_text(
        'if [ -d "$HOME/.local/bin" ] ; then PATH="$HOME/.local/bin:$PATH"; fi\n'
    )
    venv_script = tmp_path / "venv" / "bin" / "sidemirror"
    venv_script.parent.mkdir(parents=True)
    venv_script.write_text("#!/bin/sh\necho from-the-venv\n")
    venv_script.chmod(0o755)

    def link_command() -> str:
        done = subprocess.run(
            ["env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin", sys.executable, "-m",
             "sidemirror.cli.user_command", str(venv_script)],
            capture_output=True, text=True, timeout=60,
            cwd=ROOT / "server",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stderr

    first = link_command()
    assert "Installed the `sidemirror` command: ~/.local/bin/sidemirror" in first
    assert "Open a new terminal to use it" in first and "export PATH" not in first
    assert link_command() == ""  # said once
    assert _login_shell(home, "sidemirror").stdout == "from-the-venv\n"

    # Someone else's `sidemirror` (pipx, another checkout) is left alone, and that is said once.
    (home / ".local" / "bin" / "sidemirror").unlink()
    other = home / "pipx-sidemirror"
    other.write_text("#!/bin/sh\necho from-pipx\n")
    other.chmod(0o755)
    (home / ".local" / "bin" / "sidemirror").symlink_to(other)
    said = link_command()
    assert "already exists" in said and "left as it is" in said and str(venv_script) in said
    assert link_command() == ""
    assert _login_shell(home, "sidemirror").stdout == "from-pipx\n"
