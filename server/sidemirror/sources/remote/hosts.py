"""The sources that read the mirrors of remote hosts: one Claude and one Codex source per host,
started when the host is first seen (at start for mirrors already on disk, or when a forwarder
says hello), reading the mirror exactly as they read local files.

Bounded: at most `max_hosts` hosts (`sidemirror serve --max-hosts`), and one file watcher for all
of them (watcher.py), so a forwarder saying hello under ever new labels costs neither unbounded
sources nor the user's inotify instances."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from sidemirror.core.host_link import HostLink
from sidemirror.core.store import Store
from sidemirror.sources.base import Source
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.remote.mirror import HostMirror, MirrorError, known_hosts, mirror_root
from sidemirror.sources.remote.watcher import MirrorWatcher

logger = logging.getLogger(__name__)

DEFAULT_MAX_HOSTS = 32


class RemoteHosts:
    def __init__(self, store: Store, data_dir: Path, max_hosts: int = DEFAULT_MAX_HOSTS) -> None:
        self.store = store
        self.data_dir = data_dir
        # Resolved: the watcher's paths and the sources' folders must be spelled the same.
        self.root = mirror_root(data_dir).resolve()
        self.max_hosts = max_hosts
        self.mirrors: dict[str, HostMirror] = {}
        self._sources: dict[str, list[Source]] = {}
        self._lock = asyncio.Lock()
        self.watcher = MirrorWatcher(self.root)

    async def start(self) -> None:
        await self.watcher.start()
        known = known_hosts(self.data_dir)
        if len(known) > self.max_hosts:
            logger.warning(
                "%d forwarded hosts in %s; reading the first %d (--max-hosts)",
                len(known), self.root, self.max_hosts,
            )  # fmt: skip
        for label in known[: self.max_hosts]:
            await self.ensure(label)

    async def ensure(self, label: str) -> HostMirror:
        """The host's mirror, with its sources running (started once). A new host past
        `max_hosts` is refused with the reason, which the forwarder shows."""
        async with self._lock:
            mirror = self.mirrors.get(label)
            if mirror is None:
                if len(self.mirrors) >= self.max_hosts:
                    raise MirrorError(
                        f"this server takes at most {self.max_hosts} forwarded hosts "
                        "(sidemirror serve --max-hosts N); refusing a new one, "
                        f"{label!r}"
                    )
                mirror = self.mirrors[label] = HostMirror(self.root, label)
                # Before its sources start, so its workspaces share this link from the first.
                link = self.store.host_links.setdefault(label, HostLink(label))
                link.since = link.since or await asyncio.to_thread(mirror.last_heard)
                watch = self.watcher.watch
                sources: list[Source] = [
                    ClaudeSource(
                        self.store,
                        [mirror.kind_dir("claude")],
                        self.data_dir,
                        host=label,
                        watch=watch,
                    ),
                    CodexSource(
                        self.store, mirror.kind_dir("codex"), self.data_dir, host=label, watch=watch
                    ),
                ]
                for source in sources:
                    await source.start()
                self._sources[label] = sources
            return mirror

    def attach(self, label: str) -> HostLink:
        """A forwarder said hello under `label` (`ensure`d): the host shows as connected until
        the link's `detach`."""
        link = self.store.host_links[label]
        link.attach()
        return link

    async def stop(self) -> None:
        for sources in self._sources.values():
            for source in reversed(sources):
                await source.stop()
        await self.watcher.stop()
