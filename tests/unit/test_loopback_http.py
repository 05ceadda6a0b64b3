"""loopback_http.py reads the answers our server gives (a `Content-Length` body, keep-alive or
`Connection: close`) and refuses anything else with ValueError, never a hang or a wrong body."""

from __future__ import annotations

import socket
import threading

import pytest
from sidemirror.loopback_http import LoopbackConnection


def _serve(answers: list[bytes]) -> int:
    """A listener that reads one request per answer and writes that answer."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            for answer in answers:
                conn.recv(65536)
                conn.sendall(answer)

    threading.Thread(target=run, daemon=True).start()
    return int(listener.getsockname()[1])


def test_two_answers_on_one_connection_then_close() -> None:
    port = _serve([
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\nConnection: close\r\n\r\nnope!",
    ])  # fmt: skip
    conn = LoopbackConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/a")
    first = conn.getresponse()
    assert (first.status, first.read()) == (200, b"{}")
    conn.auto_open = 0
    conn.request("POST", "/b", body=b"x", headers={"Content-Type": "application/json"})
    second = conn.getresponse()
    assert (second.status, second.read(2), second.read()) == (401, b"no", b"pe!")
    assert conn.sock is None
    with pytest.raises(OSError):  # closed, and not to be reopened
        conn.request("GET", "/c")


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n",
    ],
)
def test_what_our_server_never_sends_is_refused(answer: bytes) -> None:
    conn = LoopbackConnection("127.0.0.1", _serve([answer]), timeout=5)
    conn.request("GET", "/")
    with pytest.raises(ValueError):
        conn.getresponse()
    conn.close()
