"""Who owns a loopback connection: the OS user of the client's socket (Linux).

The client's socket is the one whose local address is our peer address and whose remote
address is our own, so one exact 4-tuple finds it. The kernel is asked for that one socket by
netlink `sock_diag` (sidemirror/sock_diag.py): tens of microseconds whatever else is open, so
it runs inline, as each connection is accepted (`OwnerCache.at_connect`), and the connection
guard (web/connections.py) can cap each uid's connections. Where netlink does not answer, the
fallback reads /proc/net/tcp and tcp6, which list every socket of the network namespace: a
table any local user can inflate, so that read runs in a thread, once per connection, when its
first request arrives. Either answer is kept with the connection's transport for as long as it
lives. Other systems (and a connection whose socket is not found) give no owner:
`Owner.UNKNOWN`, served like the owner's (no worse than where the OS cannot tell: pairing always
needs the native messaging host or a code, web/pair.py).
"""

from __future__ import annotations

import enum
import ipaddress
import os
import struct
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sidemirror import sock_diag

if TYPE_CHECKING:
    import asyncio

TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
# A closed socket waiting out TIME_WAIT is listed with uid 0 and inode 0: it belongs to no one.
_TIME_WAIT = b"06"
# A line is `sl: local remote st tx:rx tr:when retrnsmt uid timeout inode ...`; counted from
# the local address, the state is the third column and the uid the seventh.
_STATE, _UID = 2, 6


class Owner(enum.Enum):
    SAME = "same"  # this server's own OS user
    OTHER = "other"  # another OS user: refused before any handler
    UNKNOWN = "unknown"  # the OS does not say: pairing needs a code


def _words(packed: bytes) -> str:
    # The kernel prints each 32-bit word of the address as %08X of its in-memory value.
    return "".join(f"{w:08X}" for w in struct.unpack(f"={len(packed) // 4}I", packed))


def _ipv4(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address, with an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as its IPv4 self."""
    address = ipaddress.ip_address(host.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def table_entries(peer: tuple[str, int], local: tuple[str, int]) -> list[tuple[int, bytes]]:
    """Where the client socket `peer` → `local` is listed: (index in TCP_TABLES, the text of
    its local and remote addresses). An IPv4 client is in tcp, or in tcp6 under its mapped
    IPv6 form when it used a dual-stack socket."""
    a, b = _ipv4(peer[0]), _ipv4(local[0])
    if isinstance(a, ipaddress.IPv4Address) and isinstance(b, ipaddress.IPv4Address):
        mapped = [ipaddress.IPv6Address(f"::ffff:{x}") for x in (a, b)]
        pairs = [(0, a.packed, b.packed), (1, mapped[0].packed, mapped[1].packed)]
    else:
        pairs = [(1, ipaddress.IPv6Address(int(a)).packed, ipaddress.IPv6Address(int(b)).packed)]
    return [
        (table, f" {_words(p)}:{peer[1]:04X} {_words(q)}:{local[1]:04X} ".encode())
        for table, p, q in pairs
    ]


def socket_uid(
    peer: tuple[str, int], local: tuple[str, int], tables: Sequence[Path] = TCP_TABLES
) -> int | None:
    """The uid owning the client socket `peer` → `local`, or None if no table lists it."""
    for table, needle in table_entries(peer, local):
        try:
            data = tables[table].read_bytes()
        except OSError:
            continue
        start = data.find(needle)
        while start >= 0:
            line_end = data.find(b"\n", start)
            fields = data[start : None if line_end < 0 else line_end].split()
            if len(fields) > _UID and fields[_STATE] != _TIME_WAIT:
                return int(fields[_UID])
            start = data.find(needle, start + 1)
    return None


def lookup_available(tables: Sequence[Path] = TCP_TABLES) -> bool:
    """Whether this OS lists socket owners where we can read them (the /proc fallback)."""
    return sys.platform.startswith("linux") and any(os.access(t, os.R_OK) for t in tables)


def _address(value: object) -> tuple[str, int] | None:
    if isinstance(value, tuple) and len(value) >= 2:
        return str(value[0]), int(value[1])
    return None


class OwnerCache:
    """The owner of each connection, looked up once and kept with the connection's transport
    for as long as it lives: by netlink as the connection is accepted, or else (the /proc
    tables can be large) in a thread when its first request arrives."""

    def __init__(
        self,
        *,
        enabled: bool,
        uid: int | None = None,
        tables: Sequence[Path] = TCP_TABLES,
        netlink: bool | None = None,
    ) -> None:
        # Asked once: "no such socket" from a working netlink must never send a lookup to the
        # /proc fallback, whose cost another user controls.
        self.netlink = enabled and (sock_diag.answers() if netlink is None else netlink)
        # `enabled=False` (a setting, or an OS with neither) makes every owner UNKNOWN.
        self.enabled = enabled and (self.netlink or lookup_available(tables))
        # Where there is no uid (Windows) the lookup is off anyway (`lookup_available`).
        self.uid = getattr(os, "geteuid", lambda: -1)() if uid is None else uid
        self.tables = tables
        self._known: weakref.WeakKeyDictionary[object, Owner] = weakref.WeakKeyDictionary()
        self.lookups = 0

    def at_connect(self, transport: asyncio.BaseTransport) -> tuple[Owner, int | None] | None:
        """The owner (and uid) of a connection just accepted, if netlink can tell at once; None
        where only the slow fallback could, which `owner` then runs in a thread."""
        if not self.netlink:
            return None
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        owner, uid = self._look_up_uid(peer, local)
        self._known[transport] = owner
        return owner, uid

    async def owner(self, transport: asyncio.BaseTransport | None) -> Owner:
        if transport is None:
            return Owner.UNKNOWN  # the connection is already gone
        known = self._known.get(transport)
        if known is None:
            peer = transport.get_extra_info("peername")
            local = transport.get_extra_info("sockname")
            if self.netlink:
                known = self.look_up(peer, local)  # one kernel hash lookup: inline
            else:
                # Imported here: the starting responder (web/starting.py) uses `look_up`
                # before asyncio is needed.
                import asyncio

                loop = asyncio.get_running_loop()
                known = await loop.run_in_executor(None, self.look_up, peer, local)
            self._known[transport] = known
        return known

    def look_up(self, peer_name: object, sock_name: object) -> Owner:
        """The owner of the connection from `peer_name` to `sock_name` (a socket's own
        addresses), asked now (blocking, for long only with the /proc fallback)."""
        return self._look_up_uid(peer_name, sock_name)[0]

    def _look_up_uid(self, peer_name: object, sock_name: object) -> tuple[Owner, int | None]:
        peer, local = _address(peer_name), _address(sock_name)
        if not self.enabled or peer is None or local is None or not _is_loopback(peer[0]):
            # A remote client (only with --allow-remote) has no socket in our tables.
            return Owner.UNKNOWN, None
        self.lookups += 1
        if self.netlink:
            uid = sock_diag.tcp_socket_uid(peer, local)
        else:
            uid = socket_uid(peer, local, self.tables)
        if uid is None:
            return Owner.UNKNOWN, None
        return (Owner.SAME if uid == self.uid else Owner.OTHER), uid


def _is_loopback(host: str) -> bool:
    try:
        return _ipv4(host).is_loopback
    except ValueError:
        return False
