"""The server's token, kept in its data dir (0600) across restarts until the user rotates it.

A token made afresh at each start would unpair the extension and every MCP client at each
restart, and teach users to paste tokens around; a kept one is as secret as the data dir it lives
in (0700, this user's only). `sidemirror token --rotate` replaces it: a token that may have
leaked stops working once the server restarts with the new one.

Standard library only (read by `sidemirror serve` and `sidemirror token`).
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from sidemirror.core.private import private_dir, untrusted, write_private

TOKEN_FILE = "token"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43,128}")  # token_urlsafe(32) gives 43 characters


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def load_token(data_dir: Path) -> str:
    """The data dir's token, made and kept the first time (or when the file is damaged or not
    certainly ours: a token another user could have written would be theirs to know)."""
    path = data_dir / TOKEN_FILE
    if untrusted(path, folder=False) is None:
        try:
            existing = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            existing = ""
        if _TOKEN.fullmatch(existing):
            return existing
    return rotate_token(data_dir)


def rotate_token(data_dir: Path) -> str:
    """Replace the data dir's token with a new one, and return it."""
    private_dir(data_dir)
    token = new_token()
    write_private(data_dir / TOKEN_FILE, token + "\n")
    return token
