"""Is the process on the runtime file's port the server that wrote the file? Checked by the hook
and the CLI before they send the token or believe an answer.

A runtime file names a port, and a port names nothing lasting: once the server is gone any
process, another OS user's included, can listen there. So before the token leaves:

1. On Linux, the listening socket on the port must belong to this OS user (the kernel says who
   owns it: `sock_diag` netlink, else `/proc/net/tcp{,6}`). Another user's impostor is refused
   without a byte sent to it.
2. The listener must prove it holds the runtime file's token, without the token being sent:
   `GET /api/identify?nonce=N` answers HMAC-SHA256(token, "sidemirror-identify:" + server_id +
   ":" + N), as for the extension (web/identify.py), and its `server_id` must be the one in the
   runtime file. A same-user process on the port has no token, so it cannot answer. The hook
   then sends its event on the same connection (`checked_connection`), so the proof covers the
   very peer that gets the token and gives the answer.

Standard library only: the hook runs this on every tool call, and imports what a check needs
only once a server may run (`checked_loopback` spares it `http.client` too).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # `typing` is a module import of its own: the hook runs on every tool call
if TYPE_CHECKING:
    import http.client
    from collections.abc import Callable, Mapping
    from typing import Any, Protocol, TypeVar

    from sidemirror.loopback_http import LoopbackConnection

    class _Response(Protocol):
        status: int

        def read(self, amt: int | None = None, /) -> bytes: ...

    class _Connection(Protocol):
        """What the checks use of a connection: `http.client.HTTPConnection` or, for the hook
        and the status line, `loopback_http.LoopbackConnection`."""

        port: int
        auto_open: int

        @property
        def sock(self) -> object: ...

        def request(
            self, method: str, url: str, body: bytes | None = ..., headers: Mapping[str, str] = ...
        ) -> None: ...

        def getresponse(self) -> _Response: ...

        def close(self) -> None: ...

    C = TypeVar("C", bound=_Connection)

HOST = "127.0.0.1"  # where every client reaches the server (the runtime file gives the port)
PROOF_PREFIX = "sidemirror-identify:"  # what web/identify.py answers with (one definition)
NONCE_BYTES = 32
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp
_LOOPBACK_OR_ANY = {"0100007F", "00000000", "00000000000000000000000000000000",
                    "0000000000000000FFFF00000100007F"}  # fmt: skip


class UntrustedServer(Exception):
    """What listens on the port is not certainly the runtime file's server; says why."""

    def __init__(self, port: object, reason: str) -> None:
        super().__init__(f"not sending the token to 127.0.0.1:{port}: {reason}")
        self.reason = reason


def identity_proof(token: str, server_id: str, nonce: str) -> str:
    import hashlib  # like every import below: only once a server may run (the hook's no-server
    import hmac  # path, on every tool call, pays for none of them)

    message = f"{PROOF_PREFIX}{server_id}:{nonce}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def _proc_listener_uids(port: int) -> set[int]:
    """The owners of the listening sockets on `port` (loopback or any address), from
    `/proc/net/tcp` and `tcp6`: used where netlink does not answer (it walks the whole table)."""
    uids: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                next(fh, None)  # the header line
                for line in fh:
                    fields = line.split()
                    if len(fields) < 8 or fields[3] != _LISTEN:
                        continue
                    address, _, hex_port = fields[1].partition(":")
                    if int(hex_port, 16) == port and address in _LOOPBACK_OR_ANY:
                        uids.add(int(fields[7]))
        except (OSError, ValueError):
            continue
    return uids


def listener_uids(port: int) -> set[int]:
    """Who owns the socket listening on 127.0.0.1:`port` (empty: nothing listens there). The
    kernel is asked by netlink (sock_diag.py: the listener table only, whatever else is open);
    `/proc/net/tcp{,6}` is read only where netlink does not answer."""
    from sidemirror.sock_diag import tcp_listener_uid

    uid = tcp_listener_uid(HOST, port)
    return {uid} if uid is not None else _proc_listener_uids(port)


def check_listener_owner(port: int) -> None:
    """On Linux, the listener on `port` must be this OS user's (elsewhere the OS does not
    say; the proof below still holds). Raises `UntrustedServer`."""
    if not sys.platform.startswith("linux"):
        return
    uids = listener_uids(port)
    me = os.geteuid()
    if not uids:
        raise UntrustedServer(port, "nothing listens on that port")
    others = sorted(uids - {me})
    if others:
        raise UntrustedServer(
            port,
            f"the process listening there belongs to uid {others[0]}, not to you (uid {me}); "
            "the server that wrote the runtime file is gone and someone else took its port",
        )


def _connection_errors() -> tuple[type[Exception], ...]:
    """What a failed exchange raises: OSError and ValueError, and `http.client`'s own errors
    when it is loaded (a connection of another kind cannot raise those)."""
    client = sys.modules.get("http.client")
    extra = (client.HTTPException,) if client is not None else ()
    return (OSError, ValueError, *extra)


def prove_identity(conn: _Connection, token: str, server_id: object) -> None:
    """The peer of `conn` proves it holds `token` (and is `server_id`) without being sent it.
    Raises `UntrustedServer`."""
    import json  # only once a server may run: no cost on the no-server path

    port = conn.port
    nonce = os.urandom(NONCE_BYTES).hex()
    try:
        conn.request("GET", f"/api/identify?nonce={nonce}", headers={"Host": f"{HOST}:{port}"})
        resp = conn.getresponse()
        body = resp.read(64 << 10)
        status = resp.status
    except _connection_errors() as exc:
        raise UntrustedServer(port, f"it did not answer the identity check ({exc})") from None
    try:
        answer = json.loads(body) if status == 200 else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise UntrustedServer(port, f"it did not answer the identity check (HTTP {status})")
    answered_id, proof = answer.get("server_id"), answer.get("proof")
    if not isinstance(answered_id, str) or not isinstance(proof, str):
        raise UntrustedServer(port, "its identity answer is malformed")
    if isinstance(server_id, str) and answered_id != server_id:
        raise UntrustedServer(
            port, f"it is another server (server_id {answered_id}, the runtime file's {server_id})"
        )
    import hmac

    expected = identity_proof(token, answered_id, nonce)
    if not hmac.compare_digest(proof.encode(), expected.encode()):
        raise UntrustedServer(port, "it cannot prove it holds the runtime file's token")


def checked_connection(info: Mapping[str, Any], timeout: float) -> http.client.HTTPConnection:
    """A connection to the server the runtime file `info` names, on which that server has
    proved itself: the listening socket's owner is checked first, then the token proof is asked
    over this very connection, which never reconnects. So what the caller sends next (the
    token, a hook event) reaches the peer that proved itself, even if the server died and
    something else took the port meanwhile. Raises `UntrustedServer`; ValueError for a file
    without a port or token."""
    import http.client

    return _checked(info, timeout, http.client.HTTPConnection)


def checked_loopback(info: Mapping[str, Any], timeout: float) -> LoopbackConnection:
    """`checked_connection` without `http.client` (loopback_http.py): for the hook and the
    status line, which run over and over and must start in milliseconds."""
    from sidemirror.loopback_http import LoopbackConnection

    return _checked(info, timeout, LoopbackConnection)


def _checked(info: Mapping[str, Any], timeout: float, make: Callable[[str, int, float], C]) -> C:
    port, token = info.get("port"), info.get("token")
    if not isinstance(port, int) or isinstance(port, bool) or not isinstance(token, str):
        raise ValueError("the runtime file has no port or token")
    check_listener_owner(port)
    conn = make(HOST, port, timeout)
    try:
        prove_identity(conn, token, info.get("server_id"))
    except BaseException:
        conn.close()
        raise
    if conn.sock is None:  # the peer closed the connection after answering
        raise UntrustedServer(port, "it closed the connection it proved itself on")
    conn.auto_open = 0  # a reconnect would reach whoever listens then: raise NotConnected
    return conn


def check_server(info: Mapping[str, Any], timeout: float = 5.0) -> None:
    """Whether the runtime file `info` names the server listening on its port (for clients
    that open their own connections next). Raises as `checked_connection`."""
    checked_connection(info, timeout).close()
