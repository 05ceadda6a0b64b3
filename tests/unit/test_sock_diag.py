"""Socket owners from the kernel by address (sidemirror/sock_diag.py), against real sockets:
our own, and another uid's made by a `setpriv` child."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from sidemirror import sock_diag

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux netlink")
as_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
NOBODY = 65534
_AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _pair(
    family: socket.AddressFamily, host: str, connect_to: str | None = None
) -> tuple[socket.socket, ...]:
    listener = socket.socket(family)
    listener.bind((host, 0))
    listener.listen()
    client = socket.create_connection((connect_to or host, listener.getsockname()[1]))
    server, _ = listener.accept()
    return listener, client, server


def _addr(name: tuple[str, int] | tuple[str, int, int, int]) -> tuple[str, int]:
    return name[0], name[1]


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_a_connection_of_our_own_is_ours_from_either_end(
    family: socket.AddressFamily, host: str
) -> None:
    listener, client, server = _pair(family, host)
    with listener, client, server:
        uid = os.geteuid()
        assert (
            sock_diag.tcp_socket_uid(_addr(client.getsockname()), _addr(client.getpeername()))
            == uid
        )
        assert (
            sock_diag.tcp_socket_uid(_addr(server.getsockname()), _addr(server.getpeername()))
            == uid
        )
        assert sock_diag.tcp_listener_uid(host, listener.getsockname()[1]) == uid


def test_an_ipv4_client_of_a_dual_stack_listener_is_found_under_either_form() -> None:
    listener, client, server = _pair(socket.AF_INET6, "::", "127.0.0.1")
    with listener, client, server:
        peer, local = _addr(server.getpeername()), _addr(server.getsockname())
        assert peer[0].startswith("::ffff:")
        assert sock_diag.tcp_socket_uid(peer, local) == os.geteuid()
        plain = (
            (peer[0].removeprefix("::ffff:"), peer[1]),
            (local[0].removeprefix("::ffff:"), local[1]),
        )
        assert sock_diag.tcp_socket_uid(*plain) == os.geteuid()
        assert sock_diag.tcp_listener_uid("127.0.0.1", local[1]) == os.geteuid()


def test_no_socket_is_none_and_a_listener_is_no_connection() -> None:
    listener, client, server = _pair(socket.AF_INET, "127.0.0.1")
    with listener, client, server:
        port = listener.getsockname()[1]
        # Without an established match the kernel falls back to the listener on the port.
        assert sock_diag.tcp_socket_uid(("127.0.0.1", port), ("127.0.0.1", 1)) is None
        assert sock_diag.tcp_socket_uid(("127.0.0.1", 1), ("127.0.0.1", port)) is None
        assert sock_diag.tcp_socket_uid(("not an address", 1), ("127.0.0.1", port)) is None
    spare = socket.socket()
    spare.bind(("127.0.0.1", 0))
    free_port = spare.getsockname()[1]
    spare.close()
    assert sock_diag.tcp_listener_uid("127.0.0.1", free_port) is None


@pytest.fixture
def nobody_child() -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    children: list[subprocess.Popen[str]] = []

    def start(code: str) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            [*_AS_NOBODY, "/usr/bin/python3", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        children.append(child)
        return child

    yield start
    for child in children:
        child.kill()
        child.wait(10)


@as_root
def test_another_uids_connection_and_listener_are_theirs(
    nobody_child: Callable[[str], subprocess.Popen[str]],
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    with listener:
        port = listener.getsockname()[1]
        # The child connects to us and listens itself, prints its ports, then waits.
        code = (
            "import socket, sys\n"
            f"c = socket.create_connection(('127.0.0.1', {port}))\n"
            "l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen()\n"
            "print(c.getsockname()[1], l.getsockname()[1], flush=True)\n"
            "sys.stdin.read()\n"
        )
        child = nobody_child(code)
        assert child.stdout is not None
        their_port, their_listener = map(int, child.stdout.readline().split())
        server, _ = listener.accept()
        with server:
            assert _addr(server.getpeername()) == ("127.0.0.1", their_port)
            seen = sock_diag.tcp_socket_uid(("127.0.0.1", their_port), ("127.0.0.1", port))
            assert seen == NOBODY
            # Our end of the same connection stays ours.
            assert sock_diag.tcp_socket_uid(("127.0.0.1", port), ("127.0.0.1", their_port)) == 0
            assert sock_diag.tcp_listener_uid("127.0.0.1", their_listener) == NOBODY


def test_no_netlink_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sock_diag, "available", lambda: False)
    assert sock_diag.tcp_socket_uid(("127.0.0.1", 1), ("127.0.0.1", 2)) is None
    assert sock_diag.tcp_listener_uid("127.0.0.1", 1) is None
