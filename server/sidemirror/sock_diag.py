"""Who owns a TCP socket, asked of the kernel by address (Linux netlink `sock_diag`).

Reading /proc/net/tcp walks every socket of the network namespace, so its cost grows with a
table that any local user can inflate. `NETLINK_SOCK_DIAG` with an exact `inet_diag_sockid`
(no dump) makes the kernel look the socket up in its connection hash instead: one lookup costs
the same whatever else is open. Standard library only, and nothing from the rest of
sidemirror, so `sidemirror hook` can import it cheaply.

Every function answers None where the kernel does not (another OS, netlink refused, no such
socket), and callers fall back to what they did without it.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import sys

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
TCP_LISTEN = 10
# States whose diag answer carries no owner (the kernel reports uid 0): a socket waiting out
# TIME_WAIT, and a connection still in its handshake (a request socket of a listener).
_OWNERLESS = frozenset({6, 12})
_NO_COOKIE = 0xFFFFFFFF
TIMEOUT_S = 1.0

_HEADER = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
# inet_diag_msg: family, state, timer, retrans, sockid (48 bytes), expires, rqueue, wqueue,
# uid, inode.
_REPLY = struct.Struct("=BBBB2s2s16s16sIIIIIIII")
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def available() -> bool:
    """Whether this OS has netlink sock_diag at all (Linux); a lookup may still answer None."""
    return sys.platform.startswith("linux") and hasattr(socket, "AF_NETLINK")


def _address(host: str) -> _Address:
    """The address, with an IPv4-mapped IPv6 address as its IPv4 self (the kernel looks a
    mapped pair up in the IPv4 table anyway) and `localhost` as 127.0.0.1."""
    if host == "localhost":
        return ipaddress.IPv4Address("127.0.0.1")
    address = ipaddress.ip_address(host.split("%", 1)[0].strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _family_and_bytes(a: _Address, b: _Address) -> tuple[int, bytes, bytes]:
    if isinstance(a, ipaddress.IPv4Address) and isinstance(b, ipaddress.IPv4Address):
        return socket.AF_INET, a.packed.ljust(16, b"\0"), b.packed.ljust(16, b"\0")
    six = [
        x if isinstance(x, ipaddress.IPv6Address) else ipaddress.IPv6Address(f"::ffff:{x}")
        for x in (a, b)
    ]
    return socket.AF_INET6, six[0].packed, six[1].packed


def _request(
    family: int, states: int, local: tuple[bytes, int], remote: tuple[bytes, int], flags: int
) -> bytes:
    # inet_diag_req_v2 (family, protocol, ext, pad, states), then its inet_diag_sockid: ports
    # big-endian, addresses, interface (0: any), cookie (none: any socket of that address).
    body = (
        struct.pack("=BBBxI", family, socket.IPPROTO_TCP, 0, states)
        + struct.pack(">HH", local[1], remote[1])
        + local[0]
        + remote[0]
        + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)
    )
    header = _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, flags, 1, 0)
    return header + body


class _Reply:
    """One socket the kernel described: its state, addresses and owner."""

    __slots__ = ("state", "sport", "dport", "src", "dst", "uid")

    def __init__(self, payload: bytes) -> None:
        fields = _REPLY.unpack_from(payload)
        size = 4 if fields[0] == socket.AF_INET else 16
        self.state: int = fields[1]
        self.sport: int = struct.unpack(">H", fields[4])[0]
        self.dport: int = struct.unpack(">H", fields[5])[0]
        self.src: bytes = fields[6][:size]
        self.dst: bytes = fields[7][:size]
        self.uid: int = fields[14]


def _ask(message: bytes) -> list[_Reply] | None:
    """Send one request and read every socket of its answer; None if netlink is refused."""
    if not available():
        return None
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(TIMEOUT_S)
            nl.sendto(message, (0, 0))
            return _read_all(nl, dump=bool(_flags(message) & NLM_F_DUMP))
    except OSError:
        return None


def _flags(message: bytes) -> int:
    return int(_HEADER.unpack_from(message)[2])


def _read_all(nl: socket.socket, *, dump: bool) -> list[_Reply] | None:
    """The sockets of an answer: a dump ends with NLMSG_DONE, an exact request is one
    datagram (the socket, or an error)."""
    replies: list[_Reply] = []
    while True:
        data = nl.recv(1 << 16)
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, kind, _flags, _seq, _pid = _HEADER.unpack_from(data, offset)
            if length < _HEADER.size:
                return replies
            payload = data[offset + _HEADER.size : offset + length]
            if kind == NLMSG_DONE:
                return replies
            if kind == NLMSG_ERROR:
                errno = -struct.unpack_from("=i", payload)[0]
                # ENOENT: no such socket, a real answer. Anything else: netlink cannot say.
                return replies if errno in (0, 2) else None
            if kind == SOCK_DIAG_BY_FAMILY and len(payload) >= _REPLY.size:
                replies.append(_Reply(payload))
            offset += (length + 3) & ~3
        if not dump or not data:
            return replies


def tcp_socket_uid(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The uid owning the connected TCP socket whose own address is `local` and whose peer is
    `remote`, or None (no such socket, one with no owner, or no netlink).

    The kernel looks the 4-tuple up in its connection hash (an exact request, not a dump).
    A peer's socket as the server sees it: local=the peer's address, remote=the server's."""
    try:
        a, b = _address(local[0]), _address(remote[0])
    except ValueError:
        return None
    family, src, dst = _family_and_bytes(a, b)
    answer = _ask(
        _request(family, ~0 & 0xFFFFFFFF, (src, local[1]), (dst, remote[1]), NLM_F_REQUEST)
    )
    for reply in answer or ():
        # Without an established match the kernel falls back to a listener on the local
        # port: only the exact socket counts.
        exact = (reply.sport, reply.dport) == (local[1], remote[1])
        same = reply.src == a.packed and reply.dst == b.packed or _mapped(reply, a, b)
        if exact and same and reply.state != TCP_LISTEN and reply.state not in _OWNERLESS:
            return reply.uid
    return None


def _mapped(reply: _Reply, a: _Address, b: _Address) -> bool:
    """A dual-stack socket reports an IPv4 connection under its IPv4-mapped addresses."""
    if len(reply.src) != 16 or not isinstance(a, ipaddress.IPv4Address):
        return False
    return (
        _address(str(ipaddress.IPv6Address(reply.src))) == a
        and _address(str(ipaddress.IPv6Address(reply.dst))) == b
    )


def tcp_listener_uid(host: str, port: int) -> int | None:
    """The uid owning the TCP socket listening on `host`:`port` (or on the wildcard address
    that would take a connection to it), or None (nothing listens, or no netlink).

    A dump of listening sockets only: the kernel walks its listener table, never the
    connections, so the answer costs the same whatever connections are open."""
    try:
        wanted = _address(host)
    except ValueError:
        return None
    found: dict[bytes, int] = {}
    for family in (socket.AF_INET, socket.AF_INET6):
        # Only LISTEN, with the port set: the kernel walks its listener table alone and skips
        # listeners on other ports itself.
        any_address = (b"\0" * 16, port)
        nowhere = (b"\0" * 16, 0)
        flags = NLM_F_REQUEST | NLM_F_DUMP
        answer = _ask(_request(family, 1 << TCP_LISTEN, any_address, nowhere, flags))
        for reply in answer or ():
            if reply.state == TCP_LISTEN and reply.sport == port:
                found[reply.src] = reply.uid
    # The kernel gives a connection to the listener on its exact address before a wildcard.
    exact = [wanted.packed]
    if isinstance(wanted, ipaddress.IPv4Address):
        exact.append(ipaddress.IPv6Address(f"::ffff:{wanted}").packed)
        wildcards = [b"\0" * 4, b"\0" * 16]
    else:
        wildcards = [b"\0" * 16]
    for key in exact + wildcards:
        if key in found:
            return found[key]
    return None
