"""What every source is: the two shapes an adapter takes, and what a converter emits.

A `Source` follows files on this machine (Claude Code transcripts, Codex rollouts) and writes
their sessions into the store; both are a `files/source.py` `FileSource`, which runs the
lifecycle once for every agent. A `Converter` turns pushed records (a POST, a WebSocket, a tap)
into canonical items, one record at a time. Both emit items that are already redacted.
The formats and sources the server runs are listed in `registry.py`, which imports every agent
package; this module imports none, so agents can import it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sidemirror.core.models import SessionItem
from sidemirror.sources.files.indexing import IndexProgress


class Source(Protocol):
    """Follows an agent's files and keeps their sessions in the store, from `start` to `stop`.
    `start` returns at once (the server listens before any archive is read); the files already
    there are indexed in the background, with `progress` saying how far it got."""

    @property
    def progress(self) -> IndexProgress: ...

    @property
    def ready(self) -> asyncio.Event:
        """Set once the files already on disk are all listed."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass
class Emitted:
    """What a converter produced for one session: an item and/or session metadata."""

    session_id: str
    item: SessionItem | None = None
    title: str | None = None
    state: str | None = None


class Converter(Protocol):
    agent: str

    def convert(self, record: dict[str, Any]) -> list[Emitted]: ...

    def finish(self) -> list[Emitted]: ...


# A converter's constructor: it takes the session id to use when a record names none.
ConverterFactory = Callable[[str], Converter]
