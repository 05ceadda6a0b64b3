"""`sidemirror hooks install|uninstall|status` on Claude Code's settings file: only our
entries, idempotent, the rest restored byte for byte, invalid files refused untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sidemirror.hooks import settings_file

SIDEMIRROR = Path(sys.executable).with_name("sidemirror")
# A user's own file: tabs, a key order of their own, another hook on the same event.
USER_FILE = (
    '{\n\t"model": "opus",\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{"matcher": "Bash", '
    '"hooks": [{"type": "command", "command": "~/bin/audit.sh"}]}\n\t\t]\n\t},\n'
    '\t"permissions": {"allow": ["Read"]}\n}\n'
)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIDEMIRROR), "hooks", *args], capture_output=True, text=True, timeout=60
    )


def test_install_twice_leaves_one_set_and_uninstall_restores_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(USER_FILE)
    first = _cli("install", "--project", str(tmp_path))
    assert first.returncode == 0, first.stderr
    once = path.read_bytes()
    second = _cli("install", "--project", str(tmp_path))
    assert second.returncode == 0 and "already installed" in second.stdout
    assert path.read_bytes() == once

    data = json.loads(once)
    for event in settings_file.EVENTS:
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if settings_file.is_ours(h)]
        assert len(ours) == 1, event
    audit = data["hooks"]["PreToolUse"][0]
    assert audit["hooks"][0]["command"] == "~/bin/audit.sh"  # the user's hook, first, untouched
    permission = data["hooks"]["PermissionRequest"][0]["hooks"][0]
    assert permission["timeout"] >= 120  # longer than the server's decision wait
    assert (tmp_path / ".claude" / "settings.json.sidemirror-backup").read_text() == USER_FILE

    status = _cli("status", "--project", str(tmp_path))
    assert status.returncode == 0 and "11 of 11" in status.stdout

    removed = _cli("uninstall", "--project", str(tmp_path))
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == USER_FILE
    assert not (tmp_path / ".claude" / "settings.json.sidemirror-backup").exists()
    assert _cli("status", "--project", str(tmp_path)).returncode == 1


def test_uninstall_keeps_what_the_user_changed_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings_file.install(path, "/opt/bin/sidemirror hook")
    data = json.loads(path.read_text())
    data["theme"] = "dark"
    path.write_text(json.dumps(data, indent=2))
    settings_file.uninstall(path)
    after = json.loads(path.read_text())
    assert after == {**json.loads(USER_FILE), "theme": "dark"}


def test_a_file_we_created_is_removed_again(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    settings_file.install(path, "python3 -m sidemirror hook")
    assert settings_file.status(path)[1] == []
    settings_file.uninstall(path)
    assert not path.exists()


def test_invalid_json_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    broken = '{"hooks": {"Stop": [}\n'
    path.write_text(broken)
    for action in ("install", "uninstall", "status"):
        done = _cli(action, "--project", str(tmp_path))
        assert done.returncode == 2
        assert "not valid JSON" in done.stderr and "nothing was changed" in done.stderr
        assert path.read_text() == broken
    assert not (tmp_path / ".claude" / "settings.json.sidemirror-backup").exists()


def test_hooks_that_are_not_lists_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooks": {"Stop": "echo"}}')
    try:
        settings_file.install(path)
    except settings_file.SettingsError as exc:
        assert "nothing was changed" in str(exc)
    else:
        raise AssertionError("accepted a malformed hooks object")
    assert path.read_text() == '{"hooks": {"Stop": "echo"}}'
