"""HTTP/1.1 to our own server on loopback, for the two commands Claude Code runs over and over:
`sidemirror hook` (every hook event) and `sidemirror statusline run` (every message).

`http.client` imports `ssl` and the `email` package at its top: about 130 M instructions, more
than the rest of the hook together and three times a bare interpreter's start (valgrind
callgrind, docs/benchmarks.md). These two commands only ever talk to the server that proved
itself (server_check.py), which answers every request they make with a `Content-Length` body. So
this is the few lines of `http.client.HTTPConnection` they use — `request`, `getresponse`,
`read`, `sock`, `port`, `auto_open`, `close` — over a socket, and nothing more: no chunked
bodies, no redirects, no proxies, no TLS. Every other client keeps `http.client`.

Errors are `OSError` (the connection: refused, reset, timed out, or closed where `auto_open` is
0) or `ValueError` (an answer that is not the HTTP this server sends).
"""

from __future__ import annotations

import socket

TYPE_CHECKING = False  # `typing` is a module import of its own
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_HEAD = 64 << 10
MAX_BODY = 16 << 20


class LoopbackResponse:
    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self._body = body

    def read(self, amt: int | None = None) -> bytes:
        data = self._body if amt is None else self._body[:amt]
        self._body = self._body[len(data) :]
        return data


class LoopbackConnection:
    """One keep-alive connection to `host:port`, opened at the first request."""

    def __init__(self, host: str, port: int, timeout: float | None = None) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.auto_open = 1  # 0: never reconnect (a new connection could reach another listener)
        self._pending = b""

    def request(
        self,
        method: str,
        url: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if self.sock is None:
            if not self.auto_open:
                raise ConnectionError("the connection was closed and may not be reopened")
            self.sock = socket.create_connection((self.host, self.port), self.timeout)
        given = dict(headers or {})
        lines = [f"{method} {url} HTTP/1.1"]
        if not any(name.lower() == "host" for name in given):
            lines.append(f"Host: {self.host}:{self.port}")
        lines += [f"{name}: {value}" for name, value in given.items()]
        lines.append(f"Content-Length: {len(body or b'')}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))

    def getresponse(self) -> LoopbackResponse:
        head = self._read_until(b"\r\n\r\n", MAX_HEAD)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ValueError(f"not an HTTP answer: {status_line[:80]!r}")
        fields: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if "chunked" in fields.get("transfer-encoding", "").lower():
            raise ValueError("a chunked answer (the server sends Content-Length)")
        length = fields.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            raise ValueError(f"an answer of unusable length {length[:20]!r}")
        body = self._read_exactly(int(length))
        if fields.get("connection", "").lower() == "close":
            self.close()
        return LoopbackResponse(int(parts[1]), body)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self._pending = b""

    def _recv(self) -> bytes:
        if self.sock is None:
            raise ConnectionError("the connection is closed")
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection mid-answer")
        return chunk

    def _read_until(self, end: bytes, limit: int) -> bytes:
        while end not in self._pending:
            if len(self._pending) > limit:
                raise ValueError("an answer whose head does not end")
            self._pending += self._recv()
        head, _, self._pending = self._pending.partition(end)
        return head

    def _read_exactly(self, n: int) -> bytes:
        while len(self._pending) < n:
            self._pending += self._recv()
        body, self._pending = self._pending[:n], self._pending[n:]
        return body
