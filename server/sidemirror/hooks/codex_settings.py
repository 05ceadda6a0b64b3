"""Sidemirror's entries in Codex's hooks file (`~/.codex/hooks.json`, or `$CODEX_HOME`).

Codex reads `{"hooks": {event: [{"matcher"?, "hooks": [{"type": "command", "command",
"timeout"}]}]}}` from a `hooks.json` beside each config layer (Codex hooks documentation,
"Where Codex looks for hooks"; the file's root takes only `description` and `hooks`), the same
shape as Claude Code's settings, so settings_file.py's careful edit applies unchanged: only our
own entries, a backup before the first change, idempotent, uninstall restores byte for byte.

Events: all that Codex offers and that say something about a session. Codex ignores an event
name it does not know (its events table has no `deny_unknown_fields`), so one file serves every
version; `PermissionRequest` needs Codex 0.122.0 or later (docs/api.md, "Codex hooks"). No
`matcher`: Codex runs a group without one for every tool. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

from sidemirror.hooks.settings_file import Layout

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)
CODEX = Layout("codex", EVENTS, frozenset(), None)


def hooks_path(project: Path | None) -> Path:
    """`DIR/.codex/hooks.json` for a project (Codex loads it once the project is trusted),
    else the user's: `$CODEX_HOME/hooks.json`, by default `~/.codex/hooks.json`."""
    if project is not None:
        return project / ".codex" / "hooks.json"
    home = os.environ.get("CODEX_HOME")
    return (Path(home) if home else Path.home() / ".codex") / "hooks.json"
