"""The forward-only listener: a Unix socket that serves `GET /api/forward/ws` and nothing else.

`sidemirror forward` runs on other machines and reaches this server through a relay the user
runs (`ssh -R`). Whoever can use that relay on the remote side can reach what it points to, so it
must point at a listener with nothing else behind it: no pairing, no sessions, no decisions. It
takes its own token, `<data dir>/forward-token`, which the main port refuses (the main port's
token is another one and the forward route is not there), so a copy of it on a remote machine can
send files and do nothing more.

A Unix socket, not a TCP port: `ssh -R /remote.sock:/local.sock` forwards it, and on both ends the
file's mode (0600, in a 0700 folder) says which user may connect, where a loopback TCP port
admits every user of the machine. The peer's uid is checked as well (SO_PEERCRED), so a socket
file that someone loosened still admits only this user.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import socket
import struct
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from sidemirror.core.private import private_dir
from sidemirror.forward_files import ForwardTokenError, forward_socket_path, load_forward_token
from sidemirror.sources.remote.hosts import RemoteHosts
from sidemirror.web.bodies import error_response
from sidemirror.web.forward import FORWARD_LINKS, REMOTE_HOSTS, close_forward_links, forward_ws

logger = logging.getLogger(__name__)

FORWARD_PATH = "/api/forward/ws"
SOCKET_MODE = 0o600
# sun_path holds 108 bytes with its NUL on Linux, 104 on the BSDs and macOS.
MAX_SOCKET_PATH = 107 if sys.platform.startswith("linux") else 103


def _peer_uid(request: web.Request) -> int | None:
    sock = request.transport.get_extra_info("socket") if request.transport else None
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def _token_ok(request: web.Request, token: str) -> bool:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    try:
        sent = value.strip().encode()
    except UnicodeEncodeError:
        return False
    return scheme.lower() == "bearer" and bool(sent) and hmac.compare_digest(sent, token.encode())


def _guard(token: str) -> Middleware:
    """Unknown paths 404 before anything else: nothing but the forward route is here to find."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != FORWARD_PATH:
            return error_response(404, "not_found", "this socket serves only " + FORWARD_PATH)
        uid = _peer_uid(request)
        if uid is not None and uid != os.getuid():
            return error_response(403, "other_user", "this socket is its owner's only")
        if request.headers.get("Origin") is not None:  # a browser has no business here
            return error_response(403, "forbidden_origin", "no Origin is allowed here")
        if not _token_ok(request, token):
            return error_response(401, "unauthorized", "missing or wrong forward token")
        return await handler(request)

    return check


def forward_routes() -> list[web.RouteDef]:
    """Every route of the forward socket: this one (docs/api.md, kept in step by a test)."""
    return [web.get(FORWARD_PATH, forward_ws)]


def forward_app(hosts: RemoteHosts, token: str) -> web.Application:
    app = web.Application(middlewares=[_guard(token)])
    app[REMOTE_HOSTS] = hosts
    app[FORWARD_LINKS] = set()
    app.add_routes(forward_routes())
    app.on_shutdown.append(close_forward_links)
    return app


def bind_private_socket(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, mode 0600 from the moment it has that name: it is bound
    under a temporary name in the same private folder, set to 0600, then renamed over `path`
    (which also replaces the socket of a server that died)."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise OSError(
            f"the forward socket path {path} is too long for a Unix socket "
            f"(over {MAX_SOCKET_PATH} bytes): use a shorter --runtime-dir"
        )
    private_dir(path.parent)
    staging = path.with_name(f".{os.urandom(4).hex()}.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(staging))
        os.chmod(staging, SOCKET_MODE)
        os.replace(staging, path)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        staging.unlink(missing_ok=True)
        raise
    return sock


class ForwardListener:
    """The forward socket's own aiohttp runner, started and stopped with the server."""

    def __init__(self, hosts: RemoteHosts, token: str, path: Path) -> None:
        self.path = path
        # A short grace: open links are closed on shutdown (close_forward_links), so nothing
        # legitimate is left to wait for; aiohttp's default would be 60 s.
        self._runner = web.AppRunner(
            forward_app(hosts, token), access_log=None, shutdown_timeout=0.5
        )
        self._inode: int | None = None

    async def start(self) -> None:
        await self._runner.setup()
        sock = bind_private_socket(self.path)
        self._inode = self.path.stat().st_ino
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        await self._runner.cleanup()
        with contextlib.suppress(OSError):  # only our own socket: a newer server's stays
            if self._inode is not None and self.path.stat().st_ino == self._inode:
                self.path.unlink()


def forward_listener_ctx(
    hosts: RemoteHosts, data_dir: Path, runtime_dir: Path
) -> Callable[[web.Application], AsyncIterator[None]]:
    """The main app's cleanup context that runs the forward socket beside it. A socket that
    cannot be made (a path too long, a folder not ours) turns forwarding off with a message; the
    server itself still serves."""

    async def ctx(_app: web.Application) -> AsyncIterator[None]:
        listener: ForwardListener | None = None
        try:
            listener = ForwardListener(
                hosts, load_forward_token(data_dir), forward_socket_path(runtime_dir, data_dir)
            )
            await listener.start()
        except (OSError, ForwardTokenError) as exc:
            logger.error("forwarding is off: %s", exc)
            listener = None
        yield
        if listener is not None:
            await listener.stop()

    return ctx
