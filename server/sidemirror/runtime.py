"""Running the server: port choice, a scrubbed access log, and the token.

The runtime file the server leaves for its clients is in `runtime_file.py`.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from sidemirror.core.private import open_private
from sidemirror.log_filter import install_redaction
from sidemirror.settings import PORT_RANGE


class PortUnavailable(Exception):
    pass


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
