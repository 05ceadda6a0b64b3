"""Answering while the server starts: `/health` says `"status": "starting"`, every other request
is asked to come back in a moment (503 `starting`, `Retry-After: 1`).

Importing the server (aiohttp, the event models, every route) is most of a start: half a second
and more on a small machine. Meanwhile the port is bound, and without an answer the extension
says "server not running". This responder answers from the standard library's HTTP server on a
thread, within a tenth of a second of `sidemirror serve`, under the same rules as the server:
the connection's OS user (web/peer.py), Host and Origin (web/rules.py), the same headers on
every response. It takes nothing else: no token is checked because nothing here needs one. The
server stops it (`stop`) before it accepts on the socket itself; a connection this responder
took is answered and closed, and the client's next one reaches the server.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from sidemirror import __version__
from sidemirror.web.about import about
from sidemirror.web.peer import Owner, OwnerCache
from sidemirror.web.rules import PREFLIGHT_HEADERS, SECURITY_HEADERS, cors_headers, host_allowed

RETRY_AFTER_S = 1
READ_TIMEOUT_S = 5.0  # a client that sends nothing holds only its own thread, and not for long
BODY_DRAIN_MAX = 1 << 20  # read (and drop) a body up to this size, so closing sends no reset
POLL_S = 0.02  # how soon `stop` is noticed by the accept loop


class _Rules:
    def __init__(self, *, server_id: str, origins: frozenset[str], owners: OwnerCache) -> None:
        self.server_id = server_id
        self.origins = origins
        self.owners = owners
        self.started = time.monotonic()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.1"  # a refused request line still gets a status line
    server_version = f"sidemirror/{__version__}"
    sys_version = ""
    timeout = READ_TIMEOUT_S

    def do_GET(self) -> None:
        self._answer()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _answer(self) -> None:
        rules = self.server.rules
        peer, local = self.client_address, self.connection.getsockname()
        if rules.owners.look_up(peer, local) is Owner.OTHER:
            # Before reading any body: another user's bytes are not worth a thread's time.
            message = "this connection belongs to another OS user than the server's"
            return self._error(403, "other_user", message)
        self._drain_body()
        if not host_allowed(self.headers.get("Host"), int(local[1])):
            return self._error(421, "misdirected_request", "Host header is not this server")
        origin = self.headers.get("Origin")
        if origin is not None and origin not in rules.origins:
            # Not quoted back: the server redacts what it quotes, and this runs without it.
            return self._error(403, "forbidden_origin", "this Origin is not allowed")
        cors = cors_headers(origin)
        if self.command == "OPTIONS" and origin is not None:
            return self._send(204, None, {**cors, **PREFLIGHT_HEADERS})
        if self.command in ("GET", "HEAD") and self.path.split("?", 1)[0] == "/health":
            body = {
                **about(rules.server_id),
                "status": "starting",
                "uptime_s": round(time.monotonic() - rules.started, 3),
                "indexing": {"done": 0, "total": None, "read": 0},
            }
            return self._send(200, body, cors)
        message = "the server is starting: try again in a moment"
        headers = {**cors, "Retry-After": str(RETRY_AFTER_S)}
        self._send(503, {"error": {"code": "starting", "message": message}}, headers)

    def _error(self, status: int, code: str, message: str) -> None:
        self._send(status, {"error": {"code": code, "message": message}}, {})

    def _send(self, status: int, body: dict[str, Any] | None, headers: dict[str, str]) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in {**SECURITY_HEADERS, **headers}.items():
            self.send_header(name, value)
        # One answer per connection: the next one may reach the server itself.
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _drain_body(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if 0 < length <= BODY_DRAIN_MAX:
            self.rfile.read(length)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # A request the parser refused (bad request line, headers too long): the API's JSON
        # error shape, not the standard library's HTML page.
        self._error(code, "bad_request", message or "malformed request")

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a request line may carry a ticket: nothing of a request is logged


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # `stop` waits for the accept loop, not for a slow client

    def __init__(self, sock: socket.socket, rules: _Rules) -> None:
        self.address_family = sock.family
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()  # the one the base class made: ours is bound and listening already
        self.socket = sock
        self.rules = rules


class StartingResponder:
    """Answers on `sock` from `start` until `stop` (or the end of a `with` block)."""

    def __init__(
        self, sock: socket.socket, *, server_id: str, origins: frozenset[str], owners: OwnerCache
    ) -> None:
        rules = _Rules(server_id=server_id, origins=origins, owners=owners)
        self._server = _Server(sock, rules)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_S,), name="starting", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting; returns once the server may take the socket. Idempotent."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()

    def __enter__(self) -> StartingResponder:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
