"""Sidemirror's entries in Claude Code's settings file: add, remove, report.

Only our own entries are touched (a hook whose command runs `sidemirror hook`); every other
hook and setting stays as it was, in its order. Installing twice changes nothing. Before the
first change the file is copied beside it (`settings.json.sidemirror-backup`); uninstalling
writes that copy back byte for byte when the rest of the file is still what it was, so the
user's formatting survives a round trip. A file that is not valid JSON is refused and left
untouched. Standard library only, like the hook.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidemirror.hook_secret import COMMAND_ONLY_EVENTS
from sidemirror.hooks.http_hooks import HttpTarget, is_our_http

# The events that tell the panel what a session is doing (docs/api.md, "Claude Code hooks").
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PermissionRequest"})
# Claude Code stops a hook after its `timeout` (seconds). A PermissionRequest waits for the
# user's decision in the panel (the server gives up after --decision-timeout, 120 s by default).
PERMISSION_TIMEOUT_S = 300
EVENT_TIMEOUT_S = 10
BACKUP_SUFFIX = ".sidemirror-backup"
# `…/sidemirror hook` (quoted or not) or `python -m sidemirror hook`, with `--agent NAME` for
# an agent other than Claude Code: our command, however the path to it was written.
_AGENT = r"""(\s+--agent[= ][a-z]+)?"""
_OURS = re.compile(
    rf"""(^|[\s/\\"'])sidemirror(\.exe)?["']?\s+hook{_AGENT}\s*$"""
    rf"""|-m\s+sidemirror\s+hook{_AGENT}\s*$"""
)


@dataclass(frozen=True)
class Layout:
    """One agent's hooks file: the events we install, and how each entry is written. Claude
    Code's and Codex's files share the shape `{"hooks": {event: [{matcher?, hooks: [...]}]}}`."""

    agent: str
    events: tuple[str, ...]
    tool_events: frozenset[str]  # events whose group takes a `matcher` that matches every tool
    match_all: str | None  # that matcher ("*"); None: leave it out (no matcher matches all)


CLAUDE = Layout("claude", EVENTS, TOOL_EVENTS, "*")


class SettingsError(Exception):
    """The settings file cannot be changed safely; the message says why and what to do."""


def settings_path(project: Path | None) -> Path:
    if project is not None:
        return project / ".claude" / "settings.json"
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(config) if config else Path.home() / ".claude") / "settings.json"


def hook_command(agent: str = "claude") -> str:
    """How the agent should run us: the `sidemirror` script beside this Python if there is
    one (the agent's PATH may not hold the venv), else `python -m sidemirror`."""
    script = Path(sys.executable).with_name("sidemirror")
    flag = "" if agent == "claude" else f" --agent {agent}"
    if script.is_file():
        return f"{shlex.quote(str(script))} hook{flag}"
    return f"{shlex.quote(sys.executable)} -m sidemirror hook{flag}"


def is_ours(hook: object) -> bool:
    """Our command hook, or one of our HTTP hooks (http_hooks.py)."""
    return is_our_http(hook) or (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and _OURS.search(hook["command"]) is not None
    )


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    raw = path.read_bytes()
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); nothing was changed. Fix the file (or move it "
            "aside) and run the command again."
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object; nothing was changed.")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise SettingsError(
            f'{path}: "hooks" is not an object of lists as Claude Code expects; nothing was '
            "changed."
        )
    return raw, data


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of `data` with our hooks removed, and any group or event they leave empty."""
    out = dict(data)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return out
    kept_events: dict[str, Any] = {}
    for event, groups in hooks.items():
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(is_ours(h) for h in inner):
                rest = [h for h in inner if not is_ours(h)]
                if rest:
                    kept_groups.append({**group, "hooks": rest})
                continue
            kept_groups.append(group)
        if kept_groups:
            kept_events[event] = kept_groups
    if kept_events:
        out["hooks"] = kept_events
    else:
        out.pop("hooks", None)
    return out


def _with_ours(
    data: dict[str, Any], command: str, layout: Layout, http: HttpTarget | None
) -> dict[str, Any]:
    out = _without_ours(data)
    hooks = dict(out.get("hooks", {}))
    for event in layout.events:
        timeout = PERMISSION_TIMEOUT_S if event == "PermissionRequest" else EVENT_TIMEOUT_S
        wants_matcher = event in layout.tool_events and layout.match_all is not None
        group: dict[str, Any] = {"matcher": layout.match_all} if wants_matcher else {}
        entry = {"type": "command", "command": command, "timeout": timeout}
        if http is not None and event not in COMMAND_ONLY_EVENTS:
            entry = http.entry()
        group["hooks"] = [entry]
        hooks[event] = [*hooks.get(event, []), group]
    out["hooks"] = hooks
    return out


def _indent(raw: bytes | None) -> int | str:
    """The file's own indentation (two spaces when it has none to copy)."""
    match = re.search(rb"\n([ \t]+)\S", raw or b"")
    if match is None:
        return 2
    unit = match.group(1).decode()
    return unit if "\t" in unit else len(unit)


def _render(data: dict[str, Any], raw: bytes | None) -> bytes:
    text = json.dumps(data, indent=_indent(raw), ensure_ascii=False)
    return (text + "\n").encode()


def _write(path: Path, content: bytes) -> None:
    """Atomically, keeping the file's mode: Claude Code never reads half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class Outcome:
    path: Path
    changed: bool
    message: str


def install(
    path: Path,
    command: str | None = None,
    layout: Layout = CLAUDE,
    http: HttpTarget | None = None,
) -> Outcome:
    """Our entries in `path`: the command hook for every event, or with `http` (Claude Code
    2.1.63+), HTTP hooks for every event but `COMMAND_ONLY_EVENTS` (http_hooks.py)."""
    raw, data = _read(path)
    wanted = _with_ours(data, command or hook_command(layout.agent), layout, http)
    if raw is not None and wanted == data:
        return Outcome(path, False, f"already installed in {path}")
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    # The user's own bytes, once: not a file that already holds our entries (we made it, or
    # its backup was taken when they were added), else uninstall would "restore" our entries.
    if raw is not None and not backup.exists() and _without_ours(data) == data:
        _write(backup, raw)
    _write(path, _render(wanted, raw))
    return Outcome(path, True, f"installed for {len(layout.events)} events in {path}")


def uninstall(path: Path) -> Outcome:
    raw, data = _read(path)
    rest = _without_ours(data)
    if raw is None or rest == data:
        return Outcome(path, False, f"not installed in {path}")
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    original = _backup_matching(backup, rest)
    if original is not None:
        _write(path, original)  # the rest is unchanged: the user's own bytes, formatting and all
    elif not rest and raw is not None and _created_by_us(backup):
        path.unlink()
    else:
        _write(path, _render(rest, raw))
    backup.unlink(missing_ok=True)
    return Outcome(path, True, f"removed from {path}")


def _backup_matching(backup: Path, rest: dict[str, Any]) -> bytes | None:
    try:
        raw = backup.read_bytes()
        data = json.loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        return None
    return raw if data == rest else None


def _created_by_us(backup: Path) -> bool:
    return not backup.exists()


def status(path: Path, layout: Layout = CLAUDE) -> tuple[list[str], list[str]]:
    """The events our hook is installed for, and those it is missing from."""
    _, data = _read(path)
    hooks = data.get("hooks", {})
    present = [
        event
        for event in layout.events
        if any(
            is_ours(h)
            for group in hooks.get(event, [])
            if isinstance(group, dict)
            for h in group.get("hooks", [])
        )
    ]
    return present, [e for e in layout.events if e not in present]
