"""The sources that read the mirrors of remote hosts: one Claude and one Codex source per host,
started when the host is first seen (at start for mirrors already on disk, or when a forwarder
says hello), reading the mirror exactly as they read local files."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sidemirror.core.store import Store
from sidemirror.sources.base import Source
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.remote.mirror import HostMirror, known_hosts, mirror_root


class RemoteHosts:
    def __init__(self, store: Store, data_dir: Path) -> None:
        self.store = store
        self.data_dir = data_dir
        self.root = mirror_root(data_dir)
        self.mirrors: dict[str, HostMirror] = {}
        self._sources: dict[str, list[Source]] = {}
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        for label in known_hosts(self.data_dir):
            await self.ensure(label)

    async def ensure(self, label: str) -> HostMirror:
        """The host's mirror, with its sources running (started once)."""
        async with self._lock:
            mirror = self.mirrors.get(label)
            if mirror is None:
                mirror = self.mirrors[label] = HostMirror(self.root, label)
                sources: list[Source] = [
                    ClaudeSource(
                        self.store, [mirror.kind_dir("claude")], self.data_dir, host=label
                    ),
                    CodexSource(self.store, mirror.kind_dir("codex"), self.data_dir, host=label),
                ]
                for source in sources:
                    await source.start()
                self._sources[label] = sources
            return mirror

    async def stop(self) -> None:
        for sources in self._sources.values():
            for source in reversed(sources):
                await source.stop()
