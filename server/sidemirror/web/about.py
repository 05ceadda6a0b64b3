"""Who this server is, in the words `/health` uses whether it runs or is still starting: the
app, its version, the protocol and the v1.1 features it implements, and the `server_id` kept in
the data dir.

Standard library only: the responder that answers while the server starts (starting.py) says
the same before aiohttp and the models are imported.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

from sidemirror import PROTOCOL_VERSION, __version__
from sidemirror.core.private import private_dir, write_private

# The protocol v1.1 additions this server implements (docs/api.md, `/health`).
FEATURES = [
    "history",
    "diffs",
    "context",
    "search",
    "forward",
    "browser-link",
    "rewinds",
    "attention",
]

SERVER_ID_FILE = "server_id"
_SERVER_ID = re.compile(r"[0-9a-f]{32}")


def load_server_id(data_dir: Path) -> str:
    """The data dir's server id (128 random bits, hex), made the first time and kept (0600)."""
    path = data_dir / SERVER_ID_FILE
    try:
        existing = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        existing = ""
    if _SERVER_ID.fullmatch(existing):
        return existing
    private_dir(data_dir)
    new = secrets.token_hex(16)
    try:
        write_private(path, new + "\n", exclusive=not path.exists())
    except FileExistsError:  # another server on this data dir made it first: use theirs
        return load_server_id(data_dir)
    return new


def about(server_id: str) -> dict[str, Any]:
    """The fields of `/health` that say which server answers, the same in every state."""
    return {
        "app": "sidemirror",
        "version": __version__,
        "protocol": PROTOCOL_VERSION,
        "features": FEATURES,
        "server_id": server_id,
    }
