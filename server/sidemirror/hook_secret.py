"""The hook secret: what Claude Code's HTTP hooks send, and all it is good for.

An HTTP hook is a line in the user's Claude Code settings (`hooks install --transport http`):
Claude Code POSTs each hook event to our URL with the headers written there. So the credential
it sends sits in a settings file, which is less guarded than the data dir. It is therefore its
own secret, scoped to one thing: posting hook events to `POST /api/hooks/claude/http`. It reads
nothing, decides nothing, and every other route refuses it (docs/security.md, "HTTP hooks").

It is kept in the data dir (0600, made the first time, kept across restarts, so the settings
file stays valid), never in the runtime file, `/health`, an HTTP answer or a log.

Standard library only: `sidemirror hooks install` reads it.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from sidemirror.core.private import kept_value, untrusted

HOOK_SECRET_FILE = "hook_secret"
HOOK_HEADER = "X-Sidemirror-Hook"
HTTP_HOOK_PATH = "/api/hooks/claude/http"
# Events that stay command hooks under every transport: their answer decides for the user, and
# only the command hook checks that the listener is our server before it believes one.
COMMAND_ONLY_EVENTS = frozenset({"PermissionRequest"})
_SECRET = re.compile(r"[A-Za-z0-9_-]{43,128}")  # token_urlsafe(32): 256 bits


def _read(path: Path) -> str | None:
    if untrusted(path, folder=False) is not None:
        return None  # a file someone else could have written is not our secret: make another
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _SECRET.fullmatch(text) else None


def load_hook_secret(data_dir: Path) -> str:
    """The data dir's hook secret, made (0600) the first time it is asked for."""
    return kept_value(data_dir / HOOK_SECRET_FILE, _read, lambda: secrets.token_urlsafe(32))
