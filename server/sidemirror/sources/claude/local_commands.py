"""Claude Code's local slash commands: typed like a prompt but run by Claude Code itself, with
no turn of the model (`/clear`, `/model`, `/compact`, `/cost`, …).

A transcript records each as a `user` line `<command-name>/clear</command-name><command-message>
clear</command-message><command-args></command-args>`, then its output as `<local-command-stdout>
…</local-command-stdout>` (newer versions: `system` lines of subtype `local_command`). A slash
command that prompts the model (`/init`, `/review`, a custom command) looks the same at first,
and is a turn; only the name tells them apart, so the local ones are listed here.
"""

from __future__ import annotations

import re

# Claude Code's built-in commands that do not prompt the model (its `/help` lists them).
LOCAL_COMMANDS = frozenset(
    {
        "add-dir", "agents", "bashes", "bug", "clear", "compact", "config", "context", "cost",
        "doctor", "exit", "export", "fast", "feedback", "help", "hooks", "ide",
        "install-github-app", "keybindings", "login", "logout", "mcp", "memory",
        "migrate-installer", "model",
        "output-style", "permissions", "plugin", "privacy-settings", "quit", "release-notes",
        "reset", "resume", "rewind", "sandbox", "stats", "status", "statusline", "tasks",
        "terminal-setup", "theme", "todos", "upgrade", "usage", "vim",
    }
)  # fmt: skip

_NAME = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")


def is_local_command(text: str) -> bool:
    """Whether a `user` line's text is the record of a local command (not a prompt)."""
    found = _NAME.search(text)
    return found is not None and found.group(1) in LOCAL_COMMANDS
