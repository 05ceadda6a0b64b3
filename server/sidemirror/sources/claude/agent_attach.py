"""Sub-agent files joined to their sessions, so that no session is read without them.

A session read without one of its sub-agent files misses that file's items until it changes
again (which, for a finished sub-agent, is never), and a merge journal that names the file no
longer matches: the session is rebuilt under new ids, a reset for every client resuming after a
restart. At startup a client can open a session as soon as the index registers it (the streams
of a panel reconnect at once), so:

- newer-layout files (`<session>/subagents/agent-*.jsonl`) name their session in their path and
  are attached before any session is registered (`expect`), at no cost;
- older-layout files (`agent-*.jsonl` beside the sessions) say which session they belong to only
  inside, read after the main transcripts: a session in a folder holding such files is first
  read (loaded, or scanned for search) once they are attached (`finish`);
- a file attached to a session already read (it appeared later, or its session was registered
  live before the index got to it) is read at once, not at its next change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any

from sidemirror.core.store import ItemSink, SessionLog
from sidemirror.sources.claude.agent_files import agent_id, nested, session_of_agent
from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.claude.session import ClaudeSession

logger = logging.getLogger(__name__)
Spawn = Callable[[Coroutine[Any, Any, None]], None]
Grew = Callable[[ClaudeSession, str], Coroutine[Any, Any, None]]


class AgentAttachments:
    def __init__(self, by_id: dict[tuple[str, str], ClaudeSession], spawn: Spawn, grew: Grew):
        self._by_id = by_id  # the source's sessions by (project folder, session id)
        self._spawn = spawn  # runs a background task until the source stops
        self._grew = grew  # reads what a session's file added, and publishes it
        self._orphans: dict[tuple[str, str], dict[str, Path]] = {}  # files seen first
        self._unread_folders: frozenset[str] = frozenset()
        self._attached = asyncio.Event()  # every listed older-layout file has been read
        self._deferred: set[Path] = set()  # sessions whose first read waits for that

    # --- startup ---

    def expect(self, agent_files: Iterable[Path]) -> None:
        """The listed sub-agent files, before any main transcript is registered."""
        unread = set()
        for path in agent_files:
            if nested(path):
                self.attach(path, session_of_agent(path))
            else:
                unread.add(str(path.parent))
        self._unread_folders |= unread

    def expect_own(self, main: Path, nested_files: list[Path], flat: bool) -> None:
        """A session found live, before it is registered (`agent_files_of`): it may be read
        before the startup index lists its files."""
        for path in nested_files:
            self.attach(path, session_of_agent(path))
        if flat and not self._attached.is_set():
            self._unread_folders |= {str(main.parent)}

    def finish(self) -> None:
        """Every listed file has been attached (or failed to be): waiting reads go ahead."""
        self._unread_folders = frozenset()
        self._attached.set()

    def waits(self, main: Path) -> bool:
        return str(main.parent) in self._unread_folders and not self._attached.is_set()

    # --- joining files to sessions ---

    def attach(self, path: Path, session_id: str | None) -> ClaudeSession | None:
        """The session a sub-agent file belongs to, with the file added; None until known (the
        file is kept as an orphan until its session is registered: `adopt`)."""
        if session_id is None:
            return None  # its first line is not complete yet: the next change brings it
        project = str(path.parent.parent.parent if nested(path) else path.parent)
        key = agent_id(path)
        session = self._by_id.get((project, session_id))
        if session is None:
            self._orphans.setdefault((project, session_id), {})[key] = path
        elif _reading(session):  # its files are being read in a thread: add it after
            self._spawn(self._add_after_read(session, key, path))
        elif session.add_agent(key, path) and session.loaded:
            self._spawn(self._read(session, key))
        return session

    def adopt(self, session: ClaudeSession, folder: str, session_id: str) -> None:
        """A session just registered: the files that named it before it was."""
        if not self._orphans:
            return  # most sessions of an archive: nothing to look up
        for key, path in self._orphans.pop((folder, session_id), {}).items():
            session.add_agent(key, path)

    async def _add_after_read(self, session: ClaudeSession, key: str, path: Path) -> None:
        async with session.lock:  # no read in a thread now: the tailers can change
            added = session.add_agent(key, path)
        if added and session.loaded:
            await self._read(session, key)

    async def _read(self, session: ClaudeSession, key: str) -> None:
        try:
            await self._grew(session, key)
        except Exception:  # one bad file never stops the others
            logger.exception("failed to read %s", session.agents.get(key, session.main))

    # --- reads that wait for the files ---

    def reads(self, session: ClaudeSession) -> SessionReads:
        """What the session's log reads it through (`SessionLog.loader` and `.scan`)."""
        return SessionReads(self, session)

    async def load(self, session: ClaudeSession, _log: SessionLog | None = None) -> None:
        """The session's lazy loader (`SessionLog.loader`)."""
        if self.waits(session.main):
            await self._attached.wait()
        await session.load()

    async def scan(self, session: ClaudeSession, sink: ItemSink) -> bool:
        """The session's scan for the search index (`SessionLog.scan`)."""
        if self.waits(session.main):
            await self._attached.wait()
        return await session.scan(sink)

    def defer(self, session: ClaudeSession) -> bool:
        """Whether a live change must not read the session yet (its first read would happen
        without its files); it is read once they are attached. Live events never wait."""
        if session.loaded or not self.waits(session.main):
            return False
        if session.main not in self._deferred:
            self._deferred.add(session.main)
            self._spawn(self._grew_when_attached(session))
        return True

    async def _grew_when_attached(self, session: ClaudeSession) -> None:
        await self._attached.wait()
        self._deferred.discard(session.main)
        await self._read(session, MAIN)


def _reading(session: ClaudeSession) -> bool:
    """Whether a load or scan holds the session's lock (reading its files in a thread). A
    session never read has no lock yet, and asking makes none."""
    lock = session._lock
    return lock is not None and lock.locked()


class SessionReads:
    """One session's load and scan, each waiting for its sub-agent files: one small object a
    session (two `functools.partial`s cost 500 bytes, 5 MB over ten thousand listed sessions)."""

    __slots__ = ("attachments", "session")

    def __init__(self, attachments: AgentAttachments, session: ClaudeSession) -> None:
        self.attachments = attachments
        self.session = session

    async def load(self, _log: SessionLog | None = None) -> None:
        await self.attachments.load(self.session)

    async def scan(self, sink: ItemSink) -> bool:
        return await self.attachments.scan(self.session, sink)
