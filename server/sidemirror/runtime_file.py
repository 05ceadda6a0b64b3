"""The runtime file: where a running server leaves its port and token for its own user's clients.

Standard library only (and platformdirs only on macOS and Windows, imported when asked): the
Claude Code hook reads this file on every tool call of every session, so finding the server must
cost milliseconds, not the import of a web framework.

Clients trust a runtime file only if it is ours: the file and its folder must belong to this OS
user and be writable by no one else (`read_runtime_file`). Otherwise another user could hand out
a token of their own server and receive what `sidemirror ingest`, `acp-tap` or the hook send.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from sidemirror.core.private import private_dir, untrusted, write_private

APP_NAME = "sidemirror"
RUNTIME_FILE = "server.json"


class UntrustedRuntimeFile(Exception):
    """A runtime file (or its folder) that is not certainly ours; the message says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"refusing to use {path}: {reason}")
        self.path = path
        self.reason = reason


def default_runtime_dir() -> Path:
    """$XDG_RUNTIME_DIR/sidemirror, the per-user runtime folder on macOS and Windows, else a
    folder in the user's cache dir.

    Without XDG_RUNTIME_DIR (root, containers, cron) the usual fallback is a folder under /tmp,
    which another user can create first; nobody else can create one in our home.
    """
    if sys.platform in ("darwin", "win32"):
        import warnings

        import platformdirs  # only here: the Linux path below must stay standard library

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Path(platformdirs.user_runtime_dir(APP_NAME))
    xdg_runtime = os.environ.get("XDG_RUNTIME_DIR")
    if xdg_runtime and os.path.isabs(xdg_runtime) and os.path.isdir(xdg_runtime):
        return Path(xdg_runtime) / APP_NAME
    cache = os.environ.get("XDG_CACHE_HOME")
    cache_home = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return cache_home / APP_NAME / "run"


def prepare_runtime_dir(runtime_dir: Path) -> None:
    """Make the runtime folder private (0700), or raise if it is not ours (another user made it
    first, or it is a symlink): the server must not put its token where others can reach."""
    try:
        private_dir(runtime_dir)
    except OSError as exc:
        raise UntrustedRuntimeFile(runtime_dir, f"cannot make it private ({exc})") from None
    reason = untrusted(runtime_dir, folder=True)
    if reason is not None:
        raise UntrustedRuntimeFile(runtime_dir, reason)


def write_runtime_file(runtime_dir: Path, data: dict[str, Any]) -> Path:
    prepare_runtime_dir(runtime_dir)
    path = runtime_dir / RUNTIME_FILE
    import json  # here, not at the top: the hook's no-server path never needs it

    write_private(path, json.dumps(data))
    return path


def read_runtime_file(runtime_dir: Path) -> dict[str, Any] | None:
    """The running server's port and token, or None when no server runs. Raises
    `UntrustedRuntimeFile` when the file or its folder is not certainly ours."""
    path = runtime_dir / RUNTIME_FILE
    if not path.exists() and not path.is_symlink():
        return None
    for where, folder in ((runtime_dir, True), (path, False)):
        reason = untrusted(where, folder=folder)
        if reason is not None:
            raise UntrustedRuntimeFile(where, reason)
    import json

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
