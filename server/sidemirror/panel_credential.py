"""The panel credential: what deciding, answering and sending notes need, besides the token.

The runtime-file token reaches every client of this user (CLI, hook, MCP, a forwarder's
machine); it reads and reports. The panel credential reaches only the extension, over Chrome
native messaging (native_host/) or a one-time code the user types into the popup. It is kept
in the data dir (0600, made the first time, kept across restarts like the server id), never in
the runtime file, never in an HTTP answer but a code-proved `POST /api/pair`, never logged.

Standard library only: the native messaging host reads it, and must start in milliseconds.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from sidemirror.core.private import kept_value, untrusted

PANEL_CREDENTIAL_FILE = "panel_credential"
PANEL_HEADER = "X-Sidemirror-Panel"
_CREDENTIAL = re.compile(r"[A-Za-z0-9_-]{43,128}")  # token_urlsafe(32): 256 bits


class NoPanelCredential(Exception):
    """The data dir has no usable panel credential file (its server never made one, or the file
    is not certainly ours)."""


def read_panel_credential(data_dir: Path) -> str:
    """The credential kept in `data_dir`; raises `NoPanelCredential` when there is none or the
    file could have been written by someone else."""
    path = data_dir / PANEL_CREDENTIAL_FILE
    reason = untrusted(path, folder=False)
    if reason is not None:
        raise NoPanelCredential(f"{path}: {reason}")
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise NoPanelCredential(f"{path}: {exc}") from None
    if not _CREDENTIAL.fullmatch(text):
        raise NoPanelCredential(f"{path}: not a panel credential")
    return text


def load_panel_credential(data_dir: Path) -> str:
    """The data dir's panel credential, made (0600) the first time the server starts there."""
    return kept_value(data_dir / PANEL_CREDENTIAL_FILE, _usable, lambda: secrets.token_urlsafe(32))


def _usable(path: Path) -> str | None:
    try:
        return read_panel_credential(path.parent)
    except NoPanelCredential:
        return None
