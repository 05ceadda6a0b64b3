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
from sidemirror.core.private import kept_value

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
    "states",
    "answers",
    "export",
]

SERVER_ID_FILE = "server_id"
_SERVER_ID = re.compile(r"[0-9a-f]{32}")


def load_server_id(data_dir: Path) -> str:
    """The data dir's server id (128 random bits, hex), made the first time and kept (0600)."""
    return kept_value(data_dir / SERVER_ID_FILE, _read_server_id, lambda: secrets.token_hex(16))


def _read_server_id(path: Path) -> str | None:
    try:
        existing = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return existing if _SERVER_ID.fullmatch(existing) else None


def about(server_id: str) -> dict[str, Any]:
    """The fields of `/health` that say which server answers, the same in every state."""
    return {
        "app": "sidemirror",
        "version": __version__,
        "protocol": PROTOCOL_VERSION,
        "features": FEATURES,
        "server_id": server_id,
    }
