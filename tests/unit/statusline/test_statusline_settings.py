"""`sidemirror statusline install|uninstall|status` on Claude Code's settings file: the user's
status line keeps running inside ours, other keys stay, the file comes back byte for byte."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from sidemirror.hooks import settings_file
from sidemirror.statusline import settings

from tests.harness.cli import run_cli

USER_FILE = (
    '{\n    "model": "opus",\n    "statusLine": {"type": "command", "command": '
    '"~/.claude/statusline.sh --color", "padding": 2, "refreshInterval": 5}\n}\n'
)


def test_install_wraps_the_users_status_line_says_so_and_uninstall_restores_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(USER_FILE)
    done = run_cli("statusline", "install", "--project", str(tmp_path), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "your status line was: ~/.claude/statusline.sh --color" in done.stdout
    setting = json.loads(path.read_text())["statusLine"]
    assert setting["padding"] == 2 and setting["refreshInterval"] == 5  # kept
    words = shlex.split(setting["command"])
    assert words[-4:] == ["statusline", "run", "--wrap", "~/.claude/statusline.sh --color"]
    once = path.read_bytes()
    again = run_cli("statusline", "install", "--project", str(tmp_path), home=tmp_path)
    assert "already installed" in again.stdout and path.read_bytes() == once
    status = run_cli("statusline", "status", "--project", str(tmp_path), home=tmp_path)
    assert status.returncode == 0 and "~/.claude/statusline.sh --color" in status.stdout
    removed = run_cli("statusline", "uninstall", "--project", str(tmp_path), home=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == USER_FILE
    assert not path.with_name("settings.json.sidemirror-statusline-backup").exists()
    status = run_cli("statusline", "status", "--project", str(tmp_path), home=tmp_path)
    assert status.returncode == 1


def test_without_a_status_line_ours_is_added_and_removed_whole(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}\n')
    _, before = settings.install(path, "/opt/bin/sidemirror statusline run")
    assert before.command is None
    assert json.loads(path.read_text())["statusLine"] == {
        "type": "command",
        "command": "/opt/bin/sidemirror statusline run",
    }
    settings.uninstall(path)
    assert path.read_text() == '{"model": "opus"}\n'
    made = tmp_path / "new" / "settings.json"
    settings.install(made, "/opt/bin/sidemirror statusline run")
    settings.uninstall(made)
    assert not made.exists()


def test_hooks_and_status_line_undone_in_reverse_order_give_the_users_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings_file.install(path, "/opt/bin/sidemirror hook")
    settings.install(path, "/opt/bin/sidemirror statusline run")
    settings.uninstall(path)
    settings_file.uninstall(path)
    assert path.read_text() == USER_FILE


def test_the_users_edit_meanwhile_is_kept_and_their_command_put_back(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings.install(path, "/opt/bin/sidemirror statusline run")
    data = json.loads(path.read_text())
    data["theme"] = "dark"
    path.write_text(json.dumps(data))
    settings.uninstall(path)
    assert json.loads(path.read_text()) == {**json.loads(USER_FILE), "theme": "dark"}


def test_reinstalling_from_elsewhere_keeps_the_users_original_for_uninstall(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings.install(path, "/opt/bin/sidemirror statusline run")
    path.with_name("settings.json.sidemirror-statusline-backup").unlink()  # lost, say
    settings.install(path, "/usr/local/bin/sidemirror statusline run")  # a new install path
    assert not path.with_name("settings.json.sidemirror-statusline-backup").exists()
    settings.uninstall(path)
    assert json.loads(path.read_text()) == json.loads(USER_FILE)
