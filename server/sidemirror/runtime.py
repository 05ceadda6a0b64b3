"""Running the server: a scrubbed access log, the token, the data dir claimed.

The runtime file the server leaves for its clients is in `runtime_file.py`.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from sidemirror.core.private import open_private
from sidemirror.log_filter import install_redaction


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def resolve_token(explicit: str | None) -> str:
    return explicit or os.environ.get("SIDEMIRROR_TOKEN") or new_token()


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


class AlreadyRunning(Exception):
    """Another server holds this data dir; `pid` is its process (None when it cannot be told)."""

    def __init__(self, data_dir: Path, pid: int | None) -> None:
        super().__init__(f"another server uses the data dir {data_dir}")
        self.data_dir = data_dir
        self.pid = pid


LOCK_FILE = "server.lock"


def claim_data_dir(data_dir: Path) -> int | None:
    """Hold the data dir for this process (an advisory lock the OS drops when the process ends,
    even on kill -9), and return the lock's descriptor, to keep open while serving. Two servers
    on one data dir would append to the same journals and index. Raises `AlreadyRunning`.
    None where the OS has no `fcntl` (Windows): there the runtime file is the only guard."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = open_private(data_dir / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        raise AlreadyRunning(data_dir, int(text) if text.isdigit() else None) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
