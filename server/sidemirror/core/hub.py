"""Delivery of published items to stream subscribers, with bounded memory per client.

Each subscriber owns a bounded queue. Publishing never awaits: a client that does not keep up
overflows, its queue is dropped and replaced by a single `Resync` marker, and its stream handler
answers with `reset` + `snapshot`. So one stalled client costs at most `maxsize`
references and never slows the others.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sidemirror.core.models import SessionItem

DEFAULT_QUEUE_SIZE = 2048


@dataclass(frozen=True)
class ItemPublished:
    """A new item was appended to the session log."""

    session_id: str
    item: SessionItem


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


Message = ItemPublished | EphemeralPublished | LogReset | SessionSwitched | Resync | StateChanged


@dataclass(eq=False)
class Subscriber:
    """One client's view: which topic it listens to, and its bounded queue."""

    topic: str
    maxsize: int = DEFAULT_QUEUE_SIZE
    queue: asyncio.Queue[Message] = field(init=False)
    overflows: int = 0

    def __post_init__(self) -> None:
        self.queue = asyncio.Queue(self.maxsize)

    def offer(self, message: Message) -> None:
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.overflows += 1
            # Drop everything queued: the handler re-snapshots from the log, which holds it all.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(Resync())


def session_topic(workspace_id: str, session_id: str) -> str:
    return f"s:{workspace_id}:{session_id}"


def workspace_topic(workspace_id: str) -> str:
    return f"w:{workspace_id}"


class Hub:
    """Topic → subscribers. Single-threaded (asyncio), so publishing is a plain loop."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self._topics: dict[str, set[Subscriber]] = {}
        self.queue_size = queue_size

    def subscribe(self, topic: str) -> Subscriber:
        sub = Subscriber(topic, self.queue_size)
        self._topics.setdefault(topic, set()).add(sub)
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

    def subscriber_count(self) -> int:
        return sum(len(s) for s in self._topics.values())
