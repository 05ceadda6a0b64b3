"""Sidemirror's `statusLine` in Claude Code's settings file: add, remove, report.

Claude Code has one status line command. Installing keeps the user's: its command becomes
`--wrap CMD` of ours (ours runs it and prints what it prints), and every other key of the
setting (`padding`, `refreshInterval`…) stays. Before the first change the file is copied
beside it (`settings.json.sidemirror-statusline-backup`); uninstalling writes that copy back byte
for byte when the rest of the file is still what it was, else puts the user's command back
into the setting. Installing twice changes nothing. Standard library only.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidemirror.hooks.settings_file import (
    Outcome,
    SettingsError,
    _backup_matching,
    _read,
    _render,
    _write,
)

KEY = "statusLine"
BACKUP_SUFFIX = ".sidemirror-statusline-backup"
_OURS = re.compile(r"""(^|[\s/\\"'])sidemirror(\.exe)?["']?\s+statusline\s+run(\s|$)""")


@dataclass(frozen=True)
class Previous:
    """The status line setting found before installing, as the user will be told."""

    command: str | None
    setting: object


def statusline_command() -> str:
    """How Claude Code should run us (the `sidemirror` beside this Python when there is one)."""
    script = Path(sys.executable).with_name("sidemirror")
    if script.is_file():
        return f"{shlex.quote(str(script))} statusline run"
    return f"{shlex.quote(sys.executable)} -m sidemirror statusline run"


def is_ours(setting: object) -> bool:
    command = setting.get("command") if isinstance(setting, dict) else None
    return isinstance(command, str) and _OURS.search(command) is not None


def wrapped_of(command: str) -> str | None:
    """The user's command that ours runs (`--wrap CMD`), if any."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word == "--wrap" and i + 1 < len(words):
            return words[i + 1]
    return None


def previous(data: dict[str, Any]) -> Previous:
    setting = data.get(KEY)
    if is_ours(setting):
        assert isinstance(setting, dict)
        return Previous(wrapped_of(setting["command"]), setting)
    command = setting.get("command") if isinstance(setting, dict) else None
    return Previous(command if isinstance(command, str) and command else None, setting)


def _backup(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    setting = data.get(KEY)
    if not is_ours(setting):
        return data
    assert isinstance(setting, dict)
    out = dict(data)
    wrapped = wrapped_of(setting["command"])
    if wrapped is None:
        out.pop(KEY)
    else:
        out[KEY] = {**setting, "command": wrapped}
    return out


def install(path: Path, command: str | None = None) -> tuple[Outcome, Previous]:
    raw, data = _read(path)
    before = previous(data)
    setting = data.get(KEY)
    if setting is not None and not isinstance(setting, dict):
        raise SettingsError(f'{path}: "{KEY}" is not an object; nothing was changed.')
    ours = command or statusline_command()
    if before.command:
        ours += f" --wrap {shlex.quote(before.command)}"
    rest = _without_ours(data)
    found = rest.get(KEY)
    kept: dict[str, Any] = found if isinstance(found, dict) else {}
    wanted = {**rest, KEY: {**kept, "type": "command", "command": ours}}
    if raw is not None and wanted == data:
        return Outcome(path, False, f"already installed in {path}"), before
    if raw is not None and not _backup(path).exists() and not is_ours(setting):
        _write(_backup(path), raw)
    _write(path, _render(wanted, raw))
    return Outcome(path, True, f"installed in {path}"), before


def uninstall(path: Path) -> Outcome:
    raw, data = _read(path)
    rest = _without_ours(data)
    if raw is None or rest is data:
        return Outcome(path, False, f"not installed in {path}")
    backup = _backup(path)
    original = _backup_matching(backup, rest)
    if original is not None:
        _write(path, original)  # the user's own bytes, formatting and all
    elif not rest and not backup.exists():
        path.unlink()  # the file was made by install
    else:
        _write(path, _render(rest, raw))
    backup.unlink(missing_ok=True)
    return Outcome(path, True, f"removed from {path}")


def status(path: Path) -> tuple[bool, Previous]:
    _, data = _read(path)
    return is_ours(data.get(KEY)), previous(data)
