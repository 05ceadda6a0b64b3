"""`sidemirror hooks install --agent codex` on Codex's hooks file: only our entries, one per
Codex event, idempotent, the user's file restored byte for byte, invalid files refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sidemirror.hooks import codex_settings, settings_file

from tests.harness.cli import run_cli

# A user's own Codex hooks file: a description, their own Bash check with a status message.
USER_FILE = (
    '{\n  "description": "team hooks",\n  "hooks": {\n    "PreToolUse": [\n      {\n'
    '        "matcher": "Bash",\n        "hooks": [{"type": "command", "command": '
    '"python3 ~/.codex/check.py", "statusMessage": "Checking"}]\n      }\n    ]\n  }\n}\n'
)


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli("hooks", *args, "--agent", "codex", home=None, **env)


def _project_file(project: Path, text: str) -> Path:
    """The project's `.codex/hooks.json`, holding `text`."""
    path = project / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(text)
    return path


def test_install_twice_leaves_one_set_and_uninstall_restores_byte_for_byte(tmp_path: Path) -> None:
    path = _project_file(tmp_path, USER_FILE)
    first = _cli("install", "--project", str(tmp_path))
    assert (
        first.returncode == 0 and "trusted" in first.stdout
    )  # Codex runs a new hook once the user trusts it
    once = path.read_bytes()
    assert _cli("install", "--project", str(tmp_path)).stdout.startswith("already installed")
    assert path.read_bytes() == once

    data = json.loads(once)
    assert set(data) == {"description", "hooks"}  # Codex refuses any other key at the root
    for name in codex_settings.EVENTS:
        [group] = [g for g in data["hooks"][name] if settings_file.is_ours(g["hooks"][0])]
        assert "matcher" not in group  # no matcher: every tool
        [ours] = group["hooks"]
        assert ours["type"] == "command" and ours["command"].endswith(" hook --agent codex")
    assert data["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"] >= 120
    mine = data["hooks"]["PreToolUse"][0]
    assert mine["hooks"][0]["command"] == "python3 ~/.codex/check.py"  # first, untouched

    status = _cli("status", "--project", str(tmp_path))
    assert status.returncode == 0 and "10 of 10" in status.stdout
    removed = _cli("uninstall", "--project", str(tmp_path))
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == USER_FILE
    assert not path.with_name("hooks.json.sidemirror-backup").exists()


def test_the_users_file_is_under_codex_home(tmp_path: Path) -> None:
    done = _cli("install", CODEX_HOME=str(tmp_path / "codex-home"))
    assert done.returncode == 0, done.stderr
    path = tmp_path / "codex-home" / "hooks.json"
    assert len(json.loads(path.read_text())["hooks"]) == len(codex_settings.EVENTS)
    assert _cli("uninstall", CODEX_HOME=str(tmp_path / "codex-home")).returncode == 0
    assert not path.exists()  # we made it: we remove it


def test_a_claude_install_is_not_taken_for_a_codex_one(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    settings_file.install(path, "/opt/bin/sidemirror hook --agent codex", codex_settings.CODEX)
    assert settings_file.status(path, codex_settings.CODEX)[1] == []
    assert settings_file.is_ours({"type": "command", "command": "sidemirror hook --agent codex"})
    assert not settings_file.is_ours({"type": "command", "command": "sidemirror hook; rm -rf /"})


def test_invalid_json_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = _project_file(tmp_path, '{"hooks": [}')
    done = _cli("install", "--project", str(tmp_path))
    assert done.returncode == 2 and "nothing was changed" in done.stderr
    assert path.read_text() == '{"hooks": [}'
