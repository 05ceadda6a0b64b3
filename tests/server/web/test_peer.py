"""Finding a loopback connection's OS user in /proc/net/tcp{,6} (web/peer.py)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sidemirror.web.peer import TCP_TABLES, socket_uid, table_entries


@contextmanager
def connection(family: socket.AddressFamily, bind: str, connect: str) -> Iterator[socket.socket]:
    """An accepted server-side socket of a loopback connection."""
    with socket.socket(family) as listener:
        listener.bind((bind, 0))
        listener.listen()
        with socket.create_connection((connect, listener.getsockname()[1])):
            server, _ = listener.accept()
            with server:
                yield server


@pytest.mark.parametrize(
    ("family", "bind", "connect"),
    [
        (socket.AF_INET, "127.0.0.1", "127.0.0.1"),
        (socket.AF_INET6, "::1", "::1"),
        (socket.AF_INET6, "::", "127.0.0.1"),  # dual stack: the peer is ::ffff:127.0.0.1
    ],
)
def test_the_client_socket_is_found_with_its_uid(
    family: socket.AddressFamily, bind: str, connect: str
) -> None:
    with connection(family, bind, connect) as server:
        peer, local = server.getpeername()[:2], server.getsockname()[:2]
        assert socket_uid(peer, local) == os.geteuid()
        assert socket_uid(("127.0.0.1", 1), local) is None  # no socket has that pair


def test_time_wait_entries_and_other_tables_are_ignored(tmp_path: Path) -> None:
    peer, local = ("127.0.0.1", 40000), ("127.0.0.1", 47470)
    (_, needle), _ = table_entries(peer, local)
    head = b"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"

    def row(state: bytes, uid: int) -> bytes:
        return (
            b"   7:" + needle + state + b" 00000000:00000000 00:00000000 00000000 %5d 0 1\n" % uid
        )

    tcp, tcp6 = tmp_path / "tcp", tmp_path / "tcp6"
    tcp.write_bytes(head + row(b"06", 0))
    tcp6.write_bytes(head)
    assert socket_uid(peer, local, (tcp, tcp6)) is None  # TIME_WAIT: owned by no one
    tcp.write_bytes(head + row(b"06", 0) + row(b"01", 1234))
    assert socket_uid(peer, local, (tcp, tcp6)) == 1234
    assert socket_uid(peer, local, (tmp_path / "missing", tcp6)) is None


def test_addresses_are_spelled_as_the_kernel_does() -> None:
    entries = table_entries(("127.0.0.1", 0xBBDD), ("127.0.0.1", 47470))
    assert [t for t, _ in entries] == [0, 1]
    assert entries[0][1] == b" 0100007F:BBDD 0100007F:B96E "
    assert entries[1][1].startswith(b" 0000000000000000FFFF00000100007F:BBDD ")
    ((table, v6),) = table_entries(("::1", 1), ("::1", 2))
    assert (table, v6) == (
        1,
        b" 00000000000000000000000001000000:0001 00000000000000000000000001000000:0002 ",
    )
    assert TCP_TABLES[table].name == "tcp6"
