"""The runtime files: where each running server leaves its port and token for its own user's
clients, one file per data dir (`server-<key>.json`), so two servers on two data dirs never
overwrite each other's.

Standard library only (and platformdirs only on macOS and Windows, imported when asked): the
Claude Code hook reads these files on every tool call of every session, so finding the server
must cost milliseconds, not the import of a web framework.

Clients trust a runtime file only if it is ours: the file and its folder must belong to this OS
user and be writable by no one else (`find_server`). Otherwise another user could hand out a
token of their own server and receive what `sidemirror ingest`, `acp-tap` or the hook send.
A file whose server is gone (its pid ended, or now names another process: core/process_identity)
is stale: it is set aside with the reason, never used. Whether the port still holds that server
is for the client to check before it sends the token (server_check.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from sidemirror.core.private import private_dir, untrusted, write_private
from sidemirror.core.process_identity import gone_reason, this_process

TYPE_CHECKING = False  # `typing` is a module import of its own: the hook runs on every tool call
if TYPE_CHECKING:
    from typing import Any

APP_NAME = "sidemirror"
RUNTIME_PREFIX = "server-"
RUNTIME_SUFFIX = ".json"


class UntrustedRuntimeFile(Exception):
    """A runtime file (or its folder) that is not certainly ours; the message says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"refusing to use {path}: {reason}")
        self.path = path
        self.reason = reason


def _platform_dir(kind: str) -> Path:
    import warnings

    import platformdirs  # only on macOS and Windows: the Linux paths must stay standard library

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Path(getattr(platformdirs, kind)(APP_NAME))


def _xdg_home(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable)
    return Path(value) if value and os.path.isabs(value) else Path.home() / fallback


def default_runtime_dir() -> Path:
    """$XDG_RUNTIME_DIR/sidemirror, the per-user runtime folder on macOS and Windows, else a
    folder in the user's cache dir.

    Without XDG_RUNTIME_DIR (root, containers, cron) the usual fallback is a folder under /tmp,
    which another user can create first; nobody else can create one in our home.
    """
    if sys.platform in ("darwin", "win32"):
        return _platform_dir("user_runtime_dir")
    xdg_runtime = os.environ.get("XDG_RUNTIME_DIR")
    if xdg_runtime and os.path.isabs(xdg_runtime) and os.path.isdir(xdg_runtime):
        return Path(xdg_runtime) / APP_NAME
    return _xdg_home("XDG_CACHE_HOME", ".cache") / APP_NAME / "run"


def default_data_dir() -> Path:
    """platformdirs' user data dir ($XDG_DATA_HOME/sidemirror or ~/.local/share/sidemirror on
    Linux), computed without importing it on Linux."""
    if sys.platform in ("darwin", "win32"):
        return _platform_dir("user_data_dir")
    return _xdg_home("XDG_DATA_HOME", ".local/share") / APP_NAME


def runtime_file_name(data_dir: Path) -> str:
    """The runtime file of the server on `data_dir`: the same folder reached by another path
    (relative, through a symlink) gives the same name."""
    import hashlib  # here: the hook, which only reads runtime files, never loads it

    key = hashlib.sha256(str(data_dir.expanduser().resolve()).encode()).hexdigest()[:16]
    return f"{RUNTIME_PREFIX}{key}{RUNTIME_SUFFIX}"


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


def write_runtime_file(
    runtime_dir: Path, data: dict[str, Any], data_dir: Path | None = None
) -> Path:
    """Write the runtime file of the server on `data_dir` (default: the default data dir). The
    content gains the writing process's pid, start time and boot id (what `data` gives wins)
    and `data_dir`, so clients can tell a stale file and say which server they picked."""
    data_dir = data_dir or default_data_dir()
    prepare_runtime_dir(runtime_dir)
    path = runtime_dir / runtime_file_name(data_dir)
    content = {**this_process(), **data, "data_dir": str(data_dir.resolve())}
    write_private(path, json.dumps(content))
    return path


class StaleRuntimeFile:
    """A runtime file whose server is gone, and why (for the message a client prints)."""

    __slots__ = ("path", "reason")

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason

    def message(self) -> str:
        return (
            f"ignoring the stale runtime file {self.path}: {self.reason}. Start the server with "
            "`sidemirror serve` (it replaces the file), or delete the file"
        )


def scan_runtime_dir(runtime_dir: Path) -> tuple[list[dict[str, Any]], list[StaleRuntimeFile]]:
    """The live servers' runtime file contents, oldest file first, and the stale files. Raises
    `UntrustedRuntimeFile` when the folder or a file in it is not certainly ours."""
    try:
        names = sorted(
            n for n in os.listdir(runtime_dir)
            if n.startswith(RUNTIME_PREFIX) and n.endswith(RUNTIME_SUFFIX)
        )  # fmt: skip
    except FileNotFoundError:
        return [], []
    except NotADirectoryError:
        raise UntrustedRuntimeFile(runtime_dir, "it is not a folder") from None
    if not names:
        return [], []
    reason = untrusted(runtime_dir, folder=True)
    if reason is not None:
        raise UntrustedRuntimeFile(runtime_dir, reason)
    found: list[tuple[float, dict[str, Any]]] = []
    stale: list[StaleRuntimeFile] = []
    for name in names:
        path = runtime_dir / name
        reason = untrusted(path, folder=False)
        if reason == "it does not exist":
            continue  # removed by its server since the listing
        if reason is not None:
            raise UntrustedRuntimeFile(path, reason)
        try:
            data = json.loads(path.read_text())
            mtime = path.stat().st_mtime
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        gone = gone_reason(data)
        if gone is None:
            found.append((mtime, data))
        else:
            stale.append(StaleRuntimeFile(path, gone))
    return [data for _, data in sorted(found, key=lambda pair: pair[0])], stale


class ServerChoice:
    """The server a client should talk to (None: none fits), and every live server seen.
    A plain class: `dataclasses` (and `inspect` behind it) would be most of the hook's imports."""

    __slots__ = ("server", "servers", "data_dir", "stale")

    def __init__(
        self,
        server: dict[str, Any] | None,
        servers: list[dict[str, Any]],
        data_dir: Path | None,  # the data dir asked for (None: the default one)
        stale: list[StaleRuntimeFile] | None = None,  # set aside: their servers are gone
    ) -> None:
        self.server = server
        self.servers = servers
        self.data_dir = data_dir
        self.stale = stale or []


def find_server(runtime_dir: Path, data_dir: Path | None = None) -> ServerChoice:
    """The server on `data_dir`; without one, the default data dir's server or else the only
    server running (the usual case: one server, whatever data dir it was given). Raises
    `UntrustedRuntimeFile`."""
    servers, stale = scan_runtime_dir(runtime_dir)
    wanted = str((data_dir or default_data_dir()).expanduser().resolve())
    for info in servers:
        if info.get("data_dir") == wanted:
            return ServerChoice(info, servers, data_dir, stale)
    if data_dir is None and len(servers) == 1:
        return ServerChoice(servers[0], servers, data_dir, stale)
    return ServerChoice(None, servers, data_dir, stale)


def read_runtime_file(runtime_dir: Path, data_dir: Path | None = None) -> dict[str, Any] | None:
    """The running server's port and token (see `find_server` for which), or None when no
    server fits. Raises `UntrustedRuntimeFile` when a file or its folder is not certainly ours."""
    return find_server(runtime_dir, data_dir).server
