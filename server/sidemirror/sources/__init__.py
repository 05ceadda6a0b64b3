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
    # Imported here: each source pulls in its parser stack, which the CLI's other commands skip.
    from .claude_source import ClaudeSource
    from .codex_source import CodexSource
    from .demo import DemoSource

    sources: list[Source] = []
    if settings.claude_dirs:
        sources.append(ClaudeSource(store, settings.claude_dirs, settings.data_dir))
    if settings.codex_dir is not None:
        sources.append(CodexSource(store, settings.codex_dir, settings.data_dir))
    if settings.demo:
        sources.append(DemoSource(store, settings.data_dir))
    return sources
