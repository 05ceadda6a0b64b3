"""`hooks install --transport`: which transport is chosen for which Claude Code, and HTTP hook
entries installed, switched and removed the same careful way as the command hook's."""

from __future__ import annotations

import json
from pathlib import Path

from sidemirror.hooks import settings_file
from sidemirror.hooks.http_hooks import HttpTarget, choose, http_port, is_our_http

from tests.harness.cli import run_cli
from tests.unit.hooks.test_settings_file import USER_FILE

TARGET = HttpTarget(47471, "s" * 43)


def test_auto_chooses_http_from_claude_code_2_1_63_and_the_command_hook_otherwise() -> None:
    assert choose("auto", (2, 1, 63))[0] == "http"
    assert choose("auto", (2, 2, 0))[0] == "http"
    assert choose("auto", (2, 1, 62))[0] == "command"
    assert choose("auto", None)[0] == "command"  # no `claude` to ask: the one that always works
    assert choose("command", (2, 1, 90))[0] == "command"
    assert choose("http", None)[0] == "http"


def test_http_install_keeps_permission_request_a_command_and_uninstall_restores_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings_file.install(path, "/opt/bin/sidemirror hook", http=TARGET)
    data = json.loads(path.read_text())
    for event in settings_file.EVENTS:
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if settings_file.is_ours(h)]
        assert len(ours) == 1, event
        if event == "PermissionRequest":
            assert ours[0]["type"] == "command"
        else:
            assert ours[0] == TARGET.entry() and http_port(ours[0]) == 47471
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "~/bin/audit.sh"
    again = settings_file.install(path, "/opt/bin/sidemirror hook", http=TARGET)
    assert not again.changed
    settings_file.uninstall(path)
    assert path.read_text() == USER_FILE


def test_switching_transport_replaces_our_entries_and_leaves_one_set(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_FILE)
    settings_file.install(path, "/opt/bin/sidemirror hook", http=TARGET)
    settings_file.install(path, "/opt/bin/sidemirror hook")
    data = json.loads(path.read_text())
    hooks = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert not any(is_our_http(h) for h in hooks)
    assert sum(settings_file.is_ours(h) for h in hooks) == len(settings_file.EVENTS)
    moved = HttpTarget(47472, TARGET.secret)
    settings_file.install(path, "/opt/bin/sidemirror hook", http=moved)
    ports = {http_port(h) for h in json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"]}
    assert ports == {47472}
    settings_file.uninstall(path)
    assert path.read_text() == USER_FILE


def test_only_our_url_is_ours() -> None:
    assert is_our_http(TARGET.entry())
    assert not is_our_http({"type": "http", "url": "http://127.0.0.1:8080/hooks/tool-use"})
    assert not is_our_http(
        {**TARGET.entry(), "url": "http://evil.example:47470/api/hooks/claude/http"}
    )
    assert not is_our_http({"type": "command", "command": TARGET.entry()["url"]})


def test_transport_is_refused_for_codex_and_its_file_left_alone(tmp_path: Path) -> None:
    done = run_cli(
        "hooks", "install", "--agent", "codex", "--transport", "http",
        "--project", str(tmp_path), home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "--transport is for Claude Code" in done.stderr
    assert not (tmp_path / ".codex").exists()


def test_a_file_we_made_is_removed_even_after_switching_transport(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    settings_file.install(path, "/opt/bin/sidemirror hook", http=TARGET)
    settings_file.install(path, "/opt/bin/sidemirror hook")  # --transport command, later
    assert not path.with_name("settings.json.sidemirror-backup").exists()
    settings_file.uninstall(path)
    assert not path.exists()
