"""Bounded connections: a client that never finishes its request headers cannot hold the server.

aiohttp has no timeout for reading a request's headers, so 1,500 connections sending a byte a
second (slowloris) stay open for ever and, at the fd limit, starve `/health` and the extension.
Every connection passes a guard here before aiohttp sees it:
- the first request's headers must be complete within `header_timeout`, or the connection is
  closed (later requests on a kept-alive connection are bounded by aiohttp's keep-alive timeout);
- at most `max_connections` are open; a new one over the cap first evicts the oldest connection
  still waiting for its headers, so a real request (whose headers arrive at once) always finds
  room, and is refused only when every open connection is a real one;
- another OS user's connections (known as each is accepted, web/peer.py `at_connect`) never
  use up the owner's room: each other uid may hold `per_uid_cap` connections and all of them
  together `foreign_cap` (half the cap), anything over is refused at once, and they never
  evict anyone's connection. Their requests are answered 403 and closed (web/security.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

from aiohttp import web

from sidemirror.web.peer import Owner, OwnerCache

logger = logging.getLogger(__name__)

HEADER_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 1024
# asyncio accepts up to its `backlog` connections in one go before any is admitted or evicted;
# the kernel's queue (listen_socket.BACKLOG) may be longer. Bursts stay this size, so the room
# `connection_cap` leaves for them is enough whatever the kernel queue holds.
ACCEPT_BURST = 128
FD_RESERVE = 128  # descriptors kept for followed files, journals and logs
_HEADERS_END = b"\r\n\r\n"


class ConnectionGuard:
    def __init__(
        self,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout: float = HEADER_TIMEOUT_S,
        owners: OwnerCache | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.owners = owners
        # Another user's connections are only ever refused (403): a few are enough to tell
        # them so, and all of them together never take more than half the room.
        self.foreign_cap = max(1, max_connections // 2)
        self.per_uid_cap = max(1, max_connections // 8)
        self.foreign: Counter[int] = Counter()  # open connections per other uid
        self.open = 0
        self.evicted = 0  # counted for the reliability suite and logs
        self.timed_out = 0
        self.refused_foreign = 0
        # Connections whose first headers have not arrived, oldest first (eviction order).
        self._waiting: OrderedDict[_GuardedProtocol, None] = OrderedDict()

    def wrap(self, factory: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        return lambda: _GuardedProtocol(factory(), self)

    def _admit(self, conn: _GuardedProtocol, transport: asyncio.BaseTransport) -> bool:
        known = self.owners.at_connect(transport) if self.owners is not None else None
        if known is not None and known[0] is Owner.OTHER and known[1] is not None:
            return self._admit_foreign(conn, known[1])
        if self.open >= self.max_connections:
            if not self._waiting:
                return False
            # Out of the waiting list at once, so the next arrival evicts another; it still
            # counts as open until its socket is really closed (connection_lost).
            oldest, _ = self._waiting.popitem(last=False)
            self.evicted += 1
            oldest.close()
        self.open += 1
        self._waiting[conn] = None
        return True

    def _admit_foreign(self, conn: _GuardedProtocol, uid: int) -> bool:
        """Another user's connection: within its own caps, and never at anyone's expense."""
        total = sum(self.foreign.values())
        full = self.foreign[uid] >= self.per_uid_cap or total >= self.foreign_cap
        if full or self.open >= self.max_connections:
            self.refused_foreign += 1
            return False
        conn.foreign_uid = uid
        self.foreign[uid] += 1
        self.open += 1
        # Not in the waiting list: an owner's arrival evicts only its own kind, and a slow
        # foreign connection still meets the header timer.
        return True

    def _headers_done(self, conn: _GuardedProtocol) -> None:
        self._waiting.pop(conn, None)

    def _gone(self, conn: _GuardedProtocol) -> None:
        self._waiting.pop(conn, None)
        self.open -= 1
        uid = conn.foreign_uid
        if uid is not None:
            self.foreign[uid] -= 1
            if not self.foreign[uid]:
                del self.foreign[uid]


class _GuardedProtocol(asyncio.Protocol):
    """aiohttp's protocol for one connection, behind the guard's admission and header timer."""

    def __init__(self, inner: asyncio.Protocol, guard: ConnectionGuard) -> None:
        self.inner = inner
        self.guard = guard
        self.transport: asyncio.Transport | None = None
        self.admitted = False
        self.head = b""  # the last bytes seen before the first request's headers end
        self.timer: asyncio.TimerHandle | None = None
        self.foreign_uid: int | None = None  # another OS user's connection: theirs

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if not self.guard._admit(self, transport):
            transport.abort()  # every open connection is a real one: refuse, do not queue
            return
        self.admitted = True
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(self.guard.header_timeout, self._too_slow)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.timer is not None:
            # Only the tail of what came before can hold the start of a header end split
            # across two reads; the data itself may be a whole body after the headers.
            seen = self.head + data
            if _HEADERS_END in seen:
                self._stop_timer()
                self.guard._headers_done(self)
                self.head = b""
            else:
                self.head = seen[-(len(_HEADERS_END) - 1) :]
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        if self.admitted:
            self.admitted = False
            self.guard._gone(self)
            self.inner.connection_lost(exc)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def _too_slow(self) -> None:
        self.timer = None
        self.guard.timed_out += 1
        self.close()

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class GuardedSockSite(web.SockSite):
    """`web.SockSite` whose connections pass a `ConnectionGuard` first."""

    def __init__(
        self, runner: web.BaseRunner, sock: Any, guard: ConnectionGuard, backlog: int = 128
    ) -> None:
        super().__init__(runner, sock, backlog=backlog)
        self.guard = guard

    async def start(self) -> None:
        # SockSite.start with the protocol factory wrapped; the registration is BaseSite's.
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        # asyncio listens again with the backlog it is given and accepts that many at a time:
        # it gets the burst size, then the socket gets the kernel queue length back.
        self._server = await loop.create_server(
            self.guard.wrap(server), sock=self._sock, backlog=min(ACCEPT_BURST, self._backlog)
        )
        self._sock.listen(self._backlog)
