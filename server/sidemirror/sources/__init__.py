"""Source adapters: each knows one agent's format and writes canonical items into the store."""

from __future__ import annotations

from typing import Protocol

from sidemirror.core.store import Store
from sidemirror.settings import Settings


class Source(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def build_sources(settings: Settings, store: Store) -> list[Source]:
    """The file-watching sources `serve` runs, from its settings."""
    # Imported here: each source pulls in its parser stack, which the CLI's other commands skip.
    from sidemirror.sources.claude.demo import DemoSource
    from sidemirror.sources.claude.source import ClaudeSource
    from sidemirror.sources.codex.source import CodexSource

    sources: list[Source] = []
    if settings.claude_dirs:
        sources.append(ClaudeSource(store, settings.claude_dirs, settings.data_dir))
    if settings.codex_dir is not None:
        sources.append(CodexSource(store, settings.codex_dir, settings.data_dir))
    if settings.demo:
        sources.append(DemoSource(store, settings.data_dir))
    return sources
