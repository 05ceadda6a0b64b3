"""A decoy that answers like a Sidemirror server, on the extension's default port range.

It runs for the whole e2e session (on 47470 when free, else on the first free port of the
range) and records every request. It stands for what a test run must never pair with: a user's
real server, another user's, or an impostor. It answers `/health` like Sidemirror (with its own
`server_id`), `POST /api/pair` with a token of its own, and `/api/identify` with a proof it
cannot compute (it does not hold the caller's token); everything else is 401.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

DECOY_TOKEN = "decoy-token-" + secrets.token_hex(8)


@dataclass(frozen=True)
class Seen:
    """One request the decoy received."""

    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def carries(self, secret: str) -> bool:
        text = json.dumps([self.path, self.headers]) + self.body.decode("latin-1")
        return secret in text


@dataclass
class Decoy:
    port: int
    server_id: str = field(default_factory=lambda: secrets.token_hex(16))
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    def start(self) -> Decoy:
        decoy = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 1 << 20)) if length else b""
                path = urlsplit(self.path).path
                with decoy.lock:
                    decoy.seen.append(Seen(time.monotonic(), self.command, self.path,
                                           dict(self.headers.items()), body))  # fmt: skip
                status, payload = decoy.reply(self.command, path)
                data = json.dumps(payload).encode() if status != 204 else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if origin := self.headers.get("Origin"):
                    self.send_header("Access-Control-Allow-Origin", origin)
                    self.send_header("Access-Control-Allow-Headers", "Authorization, Content-Type")
                    self.send_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_OPTIONS = _answer  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def reply(self, method: str, path: str) -> tuple[int, dict[str, Any]]:
        if method == "OPTIONS":
            return 204, {}
        if path == "/health":
            return 200, {"app": "sidemirror", "version": "0.1.0", "protocol": 1, "status": "ok",
                         "server_id": self.server_id, "instance": "decoy", "uptime_s": 1.0,
                         "workspaces": 0, "parse_errors": 0}  # fmt: skip
        if path == "/api/pair" and method == "POST":
            return 200, {"token": DECOY_TOKEN}
        if path == "/api/identify":
            return 200, {"server_id": self.server_id, "proof": "0" * 64}
        return 401, {"error": {"code": "unauthorized", "message": "decoy"}}

    def since(self, mark: float, user_agent: str) -> list[Seen]:
        """Requests since `mark` from a browser whose User-Agent contains `user_agent` (other
        processes on this machine may probe the range too; they are not the browser under test)."""
        with self.lock:
            return [
                s
                for s in self.seen
                if s.at >= mark and user_agent in s.headers.get("User-Agent", "")
            ]
