"""Source adapters: each knows one agent's format and writes canonical items into the store."""

from __future__ import annotations

from typing import Protocol

from ..settings import Settings
from ..store import Store


class Source(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def build_sources(settings: Settings, store: Store) -> list[Source]:
    """The file-watching sources `serve` runs, from its settings."""
    sources: list[Source] = []
    return sources
