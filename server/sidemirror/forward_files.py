"""Where the forward socket and the forward token are: what `sidemirror forward`'s relay points
at, and the one credential it takes (web/forward_listener.py serves them). Standard library
only: `sidemirror token --forward` and `url --forward` read them without loading the server."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

from sidemirror.core.private import private_dir, untrusted, write_private
from sidemirror.runtime_file import RUNTIME_PREFIX, RUNTIME_SUFFIX, runtime_file_name

TOKEN_FILE = "forward-token"


class ForwardTokenError(Exception):
    """The forward token file exists but cannot be trusted (not ours, a symlink, loose mode)."""


def forward_socket_path(runtime_dir: Path, data_dir: Path) -> Path:
    """`<runtime dir>/forward-<key>.sock`, `<key>` being the runtime file's: one per data dir."""
    key = runtime_file_name(data_dir).removeprefix(RUNTIME_PREFIX).removesuffix(RUNTIME_SUFFIX)
    return runtime_dir / f"forward-{key}.sock"


def forward_token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def read_forward_token(data_dir: Path) -> str | None:
    """The forward token, or None while no server has made one. Refused if the file could have
    been written by someone else."""
    path = forward_token_path(data_dir)
    if not path.exists():
        return None
    reason = untrusted(path, folder=False)
    if reason is None and path.stat().st_mode & 0o077:
        reason = "it is readable by others"
    if reason is not None:
        raise ForwardTokenError(f"refusing {path}: {reason}")
    return path.read_text().strip() or None


def load_forward_token(data_dir: Path) -> str:
    """The forward token, made (0600) on first use and kept across restarts: a token copied to a
    remote machine goes on working until the user removes the file."""
    token = read_forward_token(data_dir)
    if token is not None:
        return token
    private_dir(data_dir)
    with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
        write_private(
            forward_token_path(data_dir), secrets.token_urlsafe(32) + "\n", exclusive=True
        )
    token = read_forward_token(data_dir)
    assert token is not None
    return token
