"""Delivery of published items to stream subscribers, with bounded memory per client.

Each subscriber owns a bounded queue. Publishing never awaits: a client that does not keep up
overflows, its queue is dropped and replaced by a single `Resync` marker, and its stream handler
answers with `reset` + `snapshot`. So one stalled client costs at most `maxsize`
references and never slows the others.

The items of one write (a source's read, an ingest request's records) reach a subscriber as one
`ItemsPublished` entry, not one entry each: at a fleet's rate the per-item queue puts and wake-ups
were most of the fan-out's cost. The bound still counts items, so a client overflows after the
same number of items as before, whatever the batches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from sidemirror.core.models import SessionItem

DEFAULT_QUEUE_SIZE = 2048


@dataclass(frozen=True)
class ItemPublished:
    """A new item was appended to the session log."""

    session_id: str
    item: SessionItem


@dataclass(frozen=True)
class ItemsPublished:
    """Items appended to the session log together (one write), in order: one queue entry."""

    session_id: str
    items: tuple[SessionItem, ...]


@dataclass(frozen=True)
class EphemeralPublished:
    """A live-only item (partial text): sent to subscribers, never stored in the log."""

    session_id: str
    item: SessionItem
    stored: int  # how many stored items it follows: a client sends those first


@dataclass(frozen=True)
class LogReset:
    """The session log stopped being append-only; `epoch` is the new one."""

    session_id: str
    epoch: str


@dataclass(frozen=True)
class SessionSwitched:
    """The followed workspace has a new latest session."""

    session_id: str


@dataclass(frozen=True)
class Resync:
    """The subscriber fell behind; it must re-snapshot."""


@dataclass(frozen=True)
class StateChanged:
    """The session's state (running, idle...) changed."""

    session_id: str
    state: str
    reason: str | None = None  # why it waits (`permission`, `input`) or ended ("file removed")
    exact: bool = False  # a hook or the agent's protocol said it (core/states.py)


Message = (
    ItemPublished
    | ItemsPublished
    | EphemeralPublished
    | LogReset
    | SessionSwitched
    | Resync
    | StateChanged
)


def weight(message: Message) -> int:
    """How many items a message holds toward a subscriber's bound (a batch: each of its items)."""
    return max(1, len(message.items)) if isinstance(message, ItemsPublished) else 1


@dataclass(eq=False)
class Subscriber:
    """One client's view: which topic it listens to, and its bounded queue."""

    topic: str
    maxsize: int = DEFAULT_QUEUE_SIZE
    queue: asyncio.Queue[Message] = field(init=False)
    overflows: int = 0
    pending: int = 0  # items (by `weight`) queued: the bound is on these, not on entries

    def __post_init__(self) -> None:
        self.queue = asyncio.Queue()

    def offer(self, message: Message) -> None:
        size = weight(message)
        if self.pending + size <= self.maxsize:
            self.queue.put_nowait(message)
            self.pending += size
            return
        self.overflows += 1
        # Drop everything queued: the handler re-snapshots from the log, which holds it all.
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(Resync())
        self.pending = 1

    async def get(self) -> Message:
        """The next message (what a consumer must call, so the bound counts what is queued)."""
        message = await self.queue.get()
        self.pending -= weight(message)
        return message


def session_topic(workspace_id: str, session_id: str) -> str:
    return f"s:{workspace_id}:{session_id}"


def workspace_topic(workspace_id: str) -> str:
    return f"w:{workspace_id}"


def topic_session(topic: str) -> tuple[str, str | None] | None:
    """(workspace id, session id) of a session's topic, (workspace id, None) of a workspace's,
    None of any other. Workspace ids are hex digits: the first ":" after the kind ends one."""
    kind, _, rest = topic.partition(":")
    if kind == "w":
        return rest, None
    if kind == "s":
        workspace_id, _, session_id = rest.partition(":")
        return workspace_id, session_id
    return None


class Hub:
    """Topic → subscribers. Single-threaded (asyncio), so publishing is a plain loop."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self._topics: dict[str, set[Subscriber]] = {}
        self.queue_size = queue_size
        # Told each new subscription's topic (the store: its session's files are then read the
        # moment they are written, files/close_watch.py).
        self.on_subscribe: list[Callable[[str], None]] = []

    def subscribe(self, topic: str) -> Subscriber:
        sub = Subscriber(topic, self.queue_size)
        self._topics.setdefault(topic, set()).add(sub)
        for listener in self.on_subscribe:
            listener(topic)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        subs = self._topics.get(sub.topic)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._topics[sub.topic]

    def publish(self, topic: str, message: Message) -> None:
        for sub in tuple(self._topics.get(topic, ())):
            sub.offer(message)

    def has_subscribers(self, topic: str) -> bool:
        return topic in self._topics  # a topic's set is dropped with its last subscriber

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._topics.values())
