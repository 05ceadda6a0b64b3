"""Running the server: port choice, the runtime file, a scrubbed access log, and the token.

The runtime file holds the token, so clients trust one only if it is ours: the file and its
folder must belong to this OS user and be writable by no one else (`read_runtime_file`).
Otherwise another user could hand out a token of their own server and receive what
`sidemirror ingest` or `acp-tap` send.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from sidemirror.core.private import private_dir, untrusted, write_private
from sidemirror.log_filter import install_redaction
from sidemirror.settings import PORT_RANGE

RUNTIME_FILE = "server.json"


class PortUnavailable(Exception):
    pass


class UntrustedRuntimeFile(Exception):
    """A runtime file (or its folder) that is not certainly ours; the message says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"refusing to use {path}: {reason}")
        self.path = path
        self.reason = reason


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def bind_socket(host: str, port: int | None) -> socket.socket:
    """An explicit port binds exactly; otherwise the first free port of 47470–47479."""
    candidates = [port] if port is not None else list(PORT_RANGE)
    last: OSError | None = None
    for candidate in candidates:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        # A restarted server must get its port back while old connections sit in TIME_WAIT, or
        # resume breaks; on Linux this still refuses a port another process is listening on.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, candidate))
        except OSError as exc:
            sock.close()
            last = exc
            continue
        sock.listen(128)
        sock.setblocking(False)
        return sock
    if port is not None:
        raise PortUnavailable(f"cannot bind {host}:{port}: {last}")
    raise PortUnavailable(
        f"no free port in {PORT_RANGE.start}-{PORT_RANGE.stop - 1} on {host} (last error: {last})"
    )


def resolve_token(explicit: str | None) -> str:
    return explicit or os.environ.get("SIDEMIRROR_TOKEN") or new_token()


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
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class ScrubbedAccessLogger(AbstractAccessLogger):
    """Logs method, path and status, never the query string (tickets, tokens) or headers."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s %.1fms", request.method, request.path, response.status, time * 1000
        )


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    install_redaction(logging.getLogger())
