"""Reading a session back: the items just before one the client holds, a page at a time, and
from its start on (`page_after`), for a reader who goes to the start in one step.

A panel scrolls up through a whole session 200 items at a time. The items the log holds (in
memory or spilled, core/item_log.py) answer first; what lies before them is the part of a huge
transcript that was never parsed (`skipped_bytes`), which the source reads on demand through
`SessionLog.earlier`, backwards and in bounded memory (sources/claude/history.py).
"""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass

from sidemirror.core.models import SessionItem
from sidemirror.core.numbers import parse_count
from sidemirror.core.store import SessionLog, Store

# Set while a client's request reads the skipped part (a page, "show more"): the source's
# worker thread sees it (asyncio.to_thread copies the context) and gives that read precedence
# over background readers such as the search index filling itself.
CLIENT_READ: ContextVar[bool] = ContextVar("client_read", default=False)
CLIENT_GRACE_S = 1.0


class ReadGate:
    """Client reads first: a background read of the skipped part waits at its next step while
    any client read of the same session runs, and for CLIENT_GRACE_S after one ends (a client
    paging back asks again within moments). Two parses at once would each take twice as long
    on a busy machine, and a client is waiting for its page; the search index is not."""

    def __init__(self) -> None:
        self._clients = 0
        self._last_client = float("-inf")  # when the last client read ended (monotonic)
        self._changed = threading.Condition()

    def enter(self) -> bool:
        """Called as a read starts (in its thread); True when it is a client's."""
        client = CLIENT_READ.get()
        if client:
            with self._changed:
                self._clients += 1
        return client

    def leave(self, client: bool) -> None:
        if client:
            with self._changed:
                self._clients -= 1
                self._last_client = time.monotonic()
                self._changed.notify_all()

    def wait_turn(self, stopping: threading.Event | None) -> None:
        """A background read's step: returns once no client read runs or ended within
        CLIENT_GRACE_S (or the source stops)."""
        with self._changed:
            while not (stopping is not None and stopping.is_set()):
                quiet_for = time.monotonic() - self._last_client
                if not self._clients and quiet_for >= CLIENT_GRACE_S:
                    return
                self._changed.wait(max(0.05, CLIENT_GRACE_S - quiet_for))


class UnknownItem(LookupError):
    """The id names no item this log can page back from (another epoch, or not one of its)."""


@dataclass
class Page:
    wire: list[str]  # projected JSON of each item, oldest first
    has_more: bool


def seq_of(log: SessionLog, item_id: str) -> int:
    """The seq an id names in this log's epoch; UnknownItem otherwise."""
    epoch, dot, raw = item_id.rpartition(".")
    seq = parse_count(raw)
    if not dot or epoch != log.epoch or seq is None or seq < 1:
        raise UnknownItem(f"item {item_id!r} is not of this session's epoch {log.epoch!r}")
    return seq


async def page_before(store: Store, log: SessionLog, item_id: str, limit: int) -> Page:
    """The `limit` items just before `item_id`, oldest first, and whether more precede them.

    An id among the items held must name one of them; an id before them (a page the client got
    from the skipped part) is a position there, read by the source."""
    CLIENT_READ.set(True)  # this request's task only
    seq = seq_of(log, item_id)
    items = log.items
    held_from = items.seq_at(0) if items else None
    if held_from is not None and seq >= held_from:
        if items.index_of(seq) is None:
            raise UnknownItem(f"no item {item_id!r} in this session")
        stop = items.count_before(seq)
        start = max(0, stop - limit)
        wire = list(store.iter_wire(log, start, stop))
        need = limit - len(wire)
        if need == 0 or log.earlier is None:
            return Page(wire, start > 0 or log.earlier is not None)
        earlier, more = await _earlier(store, log, held_from, need)
        return Page(earlier + wire, more)
    if log.earlier is None:
        raise UnknownItem(f"no item {item_id!r} in this session")
    earlier, more = await _earlier(store, log, seq, limit)
    return Page(earlier, more)


async def page_after(store: Store, log: SessionLog, item_id: str | None, limit: int) -> Page:
    """The `limit` items just after `item_id` (the session's first ones for None), oldest first,
    and whether more follow them: a reader gone to the start of the session reads on down.

    The skipped part of a huge transcript comes first, read forward by the source; then the
    items held, from memory or their spill file."""
    CLIENT_READ.set(True)  # this request's task only
    above = 0 if item_id is None else seq_of(log, item_id)
    items = log.items
    held_from = items.seq_at(0) if items else None
    if held_from is not None and above >= held_from:
        index = items.index_of(above)
        if index is None:
            raise UnknownItem(f"no item {item_id!r} in this session")
        stop = min(len(items), index + 1 + limit)
        return Page(list(store.iter_wire(log, index + 1, stop)), stop < len(items))
    wire: list[str] = []
    if log.later is not None:
        epoch = log.epoch
        found, more = await log.later(above, limit)
        if log.epoch != epoch:  # the source was rebuilt while it read: these ids are gone
            raise UnknownItem(f"session {log.session_id!r} was rebuilt under a new epoch")
        wire = [store.projector.to_json(store.adopt(log, item)) for item in found]
        if more:
            return Page(wire, True)
    elif item_id is not None:
        raise UnknownItem(f"no item {item_id!r} in this session")
    stop = min(len(items), limit - len(wire))
    return Page(wire + list(store.iter_wire(log, 0, stop)), stop < len(items))


async def _earlier(store: Store, log: SessionLog, below: int, count: int) -> tuple[list[str], bool]:
    assert log.earlier is not None
    epoch = log.epoch
    found, more = await log.earlier(below, count)
    if log.epoch != epoch:  # the source was rebuilt while it read: these ids are gone
        raise UnknownItem(f"session {log.session_id!r} was rebuilt under a new epoch")
    return [store.projector.to_json(store.adopt(log, item)) for item in found], more


async def item_at(store: Store, log: SessionLog, item_id: str) -> SessionItem | None:
    """One item by id, also from the skipped part of a huge transcript ("show more" on an item
    a client paged back to)."""
    held = log.item(item_id)
    if held is not None or log.earlier is None:
        return held
    CLIENT_READ.set(True)  # this request's task only
    try:
        seq = seq_of(log, item_id)
    except UnknownItem:
        return None
    if log.items and seq >= log.items.seq_at(0):
        return None
    found, _more = await log.earlier(seq + 1, 1)
    if found and found[-1].seq == seq and log.epoch == item_id.rpartition(".")[0]:
        return store.adopt(log, found[-1])
    return None
