"""The data dir a server stores into: held by one server at a time, and able to take a write,
both checked before the server is imported (`sidemirror serve`, cli/serve.py); and the port the
server had last time, which it asks for first when it starts again.

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sidemirror.core.durable import WriteFailed, write_all
from sidemirror.core.private import open_private, private_dir, write_private

PROBE_BYTES = 64 << 10  # less free space than this under the data dir counts as a full disk


class AlreadyRunning(Exception):
    """Another server holds this data dir; `pid` is its process and `port` its port, as its lock
    file says (None when it cannot be told)."""

    def __init__(self, data_dir: Path, pid: int | None, port: int | None = None) -> None:
        super().__init__(f"another server uses the data dir {data_dir}")
        self.data_dir = data_dir
        self.pid = pid
        self.port = port


LOCK_FILE = "server.lock"
PORT_FILE = "port"


def last_port(data_dir: Path) -> int | None:
    """The port the server on this data dir listened on last time (None: never, or unreadable).
    Asking for it first keeps a restarted server where the extension and MCP clients know it."""
    try:
        text = (data_dir / PORT_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else None


def remember_port(data_dir: Path, port: int) -> None:
    """Keep `port` for the next start; a failure only costs that preference."""
    with contextlib.suppress(OSError):
        write_private(data_dir / PORT_FILE, f"{port}\n")


def claim_data_dir(data_dir: Path, port: int) -> int | None:
    """Hold the data dir for this process (an advisory lock the OS drops when the process ends,
    even on kill -9), and return the lock's descriptor, to keep open while serving. Two servers
    on one data dir would append to the same journals and index. Raises `AlreadyRunning`.
    None where the OS has no `fcntl` (Windows): there the runtime file is the only guard.

    The lock file holds `PID PORT`: a second server on this data dir can say where the first
    listens even when their runtime files are in different folders (`--runtime-dir`)."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = open_private(data_dir / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            text = os.pread(fd, 64, 0).decode("ascii", "replace")
        finally:
            os.close(fd)
        raise AlreadyRunning(data_dir, *_holder(text)) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {port}\n".encode(), 0)
    return fd


def _holder(text: str) -> tuple[int | None, int | None]:
    """(pid, port) from a lock file's `PID PORT` (an older server wrote `PID` alone)."""
    fields: list[int | None] = [int(f) if f.isdigit() else None for f in text.split()[:2]]
    pid, port = (fields + [None, None])[:2]
    return pid, port if port is not None and 0 < port < 65536 else None


def write_problem(data_dir: Path) -> str | None:
    """Why the data dir cannot take a write (it is created if missing), or None when it can. A
    server that cannot store what it is sent must not start: it says why in one line instead."""
    probe = data_dir / f".probe-{os.getpid()}"
    try:
        private_dir(data_dir)  # and its missing parents: 0700, whatever the umask
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            write_all(fd, bytes(PROBE_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except (OSError, WriteFailed) as exc:
        error = exc.error if isinstance(exc, WriteFailed) else exc
        return (
            f"cannot write to the data dir {data_dir}: {error.strerror or error} "
            "(free some space there, or choose another with --data-dir)"
        )
    return None
