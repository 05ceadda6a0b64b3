"""What every file-following source does, whatever the agent: watch its folders, index what is
already there, register a file's session, follow its growth, end it when the file goes.

The lifecycle, written once: `start` puts the watches in place in the background and returns;
once they are in place every later change is seen, so the archive is listed and indexed then
(`_index`: newest first, `files/indexing.py`), a session a live change registered first being
left as it is. A change on a known file reads what it added (`_grew`); on an unknown one, its
head is read and its session registered (`_register`); a deleted file ends its session
(`files/removed.py`). The workspace of a session takes the agent process running in its
directory (`pid`): looked for when a session appears and after it grows, and, for this machine's
files, by `proc_watch.follow_agents` before an agent writes at all.

An agent's source says only what differs: which dirs and which file names (`_accept`, `_list`),
how a file's head is read and kept (`heads`), how a file maps to a session (`_register`,
`_other_file`), and how a session reads its growth (`_on_change`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, NamedTuple, TypedDict, TypeVar, Unpack

from sidemirror.core.store import SessionLog, Store, Workspace
from sidemirror.sources.files import indexing
from sidemirror.sources.files.close_watch import REST_S, CloseWatch
from sidemirror.sources.files.indexing import IndexProgress, Listed
from sidemirror.sources.files.listing import distinct_dirs
from sidemirror.sources.files.regular import SpecialFiles
from sidemirror.sources.files.removed import removed, returned
from sidemirror.sources.files.session import BackgroundTasks, FileSession
from sidemirror.sources.files.watch import Change, WatchPaths, watch_paths
from sidemirror.sources.proc_watch import follow_agents
from sidemirror.sources.procs import agent_pids, pid_alive
from sidemirror.sources.remote.names import ensure_host_workspace

logger = logging.getLogger(__name__)
PROGRESS_EVERY_S = 2.0  # an index slower than this says in the log how long it took

S = TypeVar("S", bound=FileSession)
H = TypeVar("H")

# The stores whose agent processes a source already follows: one scan of /proc serves them all.
_FOLLOWED: weakref.WeakSet[Store] = weakref.WeakSet()


@dataclass(frozen=True)
class Heads(Generic[H]):
    """What the listing reads of a file (`read`: module-level, a second interpreter may run
    it), and how that read is kept in the file index (`encode`, `decode`) under `kind`."""

    kind: str
    read: Callable[[Path], H | None]
    encode: Callable[[H], Any]
    decode: Callable[[Path, Any], H | None]

    def remembered(self, data_dir: Path, host: str | None) -> indexing.Remembered[H]:
        source = indexing.index_source(self.kind, host)
        return indexing.Remembered(data_dir, source, self.encode, self.decode)


class Options(TypedDict, total=False):
    """How a source follows its files, the same for every agent."""

    watch_step_ms: int  # the watchfiles fallback's polling step
    host: str | None  # files mirrored from another machine: workspaces are `host:/dir`
    watch: WatchPaths  # a mirror's sources share one watcher (sources/remote/watcher.py)


class Listing(NamedTuple):
    """An archive as listed: the sessions' own files and other files that belong to them (a
    Claude session's sub-agents), each newest first, and the paths named like one that are
    not regular files (left out: reading one could block, or mean nothing)."""

    files: list[Listed]
    others: list[Listed]
    special: list[Path]


class FileSource(Generic[S, H]):
    agent: ClassVar[str]  # the sessions' agent, the index rows' kind, the tasks' names
    label: ClassVar[str]  # its folders in the log: "Claude Code directory"
    watch_depth: ClassVar[int]  # how deep below a root its files are
    heads: Heads[H]

    def __init__(
        self, store: Store, roots: list[Path], data_dir: Path, **options: Unpack[Options]
    ) -> None:
        self.store = store
        self.roots = roots
        self.dirs: list[Path] = []  # resolved at start: a dir may be created before then
        self.data_dir = data_dir
        self.watch_step_ms = options.get("watch_step_ms", 10)
        self.host = options.get("host")
        self.watch = options.get("watch", watch_paths)
        # By path, kept as a string: ten thousand `Path` keys were 5 MB.
        self.sessions: dict[str, S] = {}
        self._special = SpecialFiles(store)  # FIFOs and such named like the files
        self._stop = asyncio.Event()
        self._tasks = BackgroundTasks()
        self.ready = asyncio.Event()  # set once watched and the startup index is done
        self.progress = IndexProgress()
        self._close: CloseWatch | None = None  # followed files' own watch, while watching
        # Files watched closely since the folders' watch last gave a round: what was written to
        # them before that is in its next round, to be read there (files/close_watch.py).
        self._newly_close: set[Path] = set()

    # --- what an agent says ---

    def _accept(self, path: Path) -> bool:
        """Whether a changed path is one of the agent's files."""
        raise NotImplementedError

    def _list(self) -> Listing:
        """The files on disk (run in a thread)."""
        raise NotImplementedError

    def _register(self, path: Path, head: H, pids: dict[str, int]) -> S | None:
        """The session of a newly seen file (None: it is not one of its own)."""
        raise NotImplementedError

    async def _on_change(self, session: S, key: str) -> bool:
        """Read what the session's file `key` added; True if items were published."""
        raise NotImplementedError

    async def _other_file(self, path: Path) -> bool:
        """Follow a change on a file that belongs to a session without being its own (True:
        it was one)."""
        return False

    def _is_own_file(self, path: Path) -> bool:
        """Whether a new file, where it is, can be a session's own."""
        return True

    async def _before_register(self, path: Path) -> None:
        """Runs before a live change registers a new session."""

    def _deferred(self, session: S) -> bool:
        """Whether a live change must not read `session` yet (it is read later)."""
        return False

    # --- lifecycle ---

    async def start(self) -> None:
        """Returns at once: the archive is indexed in the background once the watches are in
        place (`_watch`), so the server listens first and no change is missed meanwhile."""
        self.dirs = distinct_dirs(self.roots, self.label)
        self._tasks.spawn(self._watch(), name=f"{self.agent}-watch")
        # Agents are seen as they start, before they write (proc_watch.py). Not for a remote
        # host's mirror: its agents run on that machine, not among this one's processes.
        if self.host is None and self.store not in _FOLLOWED:
            _FOLLOWED.add(self.store)
            self._tasks.spawn(self._follow_agents(), name="agent-pids")

    async def stop(self) -> None:
        self._stop.set()
        await self._tasks.stop()

    async def _follow_agents(self) -> None:
        try:
            await follow_agents(self.store, self._stop)
        finally:
            _FOLLOWED.discard(self.store)  # another source of the store may take it over

    # --- the archive ---

    async def _index(self) -> None:
        """Index what is on disk, newest first: the listing fills while clients already read it.
        A session a live change registered first is left as it is."""
        started = time.monotonic()
        listing, pids = await asyncio.gather(
            asyncio.to_thread(self._list), asyncio.to_thread(self._live_agents)
        )
        for path in listing.special:
            self._special.skip(path)
        self.progress.total = len(listing.files) + len(listing.others)
        await self._index_files(listing, pids)
        if time.monotonic() - started > PROGRESS_EVERY_S:
            logger.info(
                "indexed %d %s sessions in %.1fs",
                len(self.sessions),
                self.agent,
                time.monotonic() - started,
            )
        self.ready.set()

    async def _index_files(self, listing: Listing, pids: dict[str, int]) -> None:
        kept = self.heads.remembered(self.data_dir, self.host)
        name = f"{self.agent}-index"
        async for batch in indexing.read_in_batches(
            listing.files, self.heads.read, self.progress, name, kept
        ):
            for path, head in batch:
                if head is not None and str(path) not in self.sessions:
                    self._register(path, head, pids)

    def _workspace(self, cwd: str, branch: str | None, pids: dict[str, int]) -> Workspace:
        """The workspace of a session found in `cwd`, with its branch and live agent."""
        ws = ensure_host_workspace(self.store, self.host, cwd, self.agent)
        if branch and branch != ws.branch:  # most sessions repeat it: redact it once
            ws.branch = branch
        if ws.pid != (pid := pids.get(ws.directory)):
            ws.pid = pid
        return ws

    def _live_agents(self) -> dict[str, int]:
        """{cwd: pid} of the agents running now, scanned afresh (run it in a thread). Empty for
        a mirrored host's files: its agents are not among this machine's processes."""
        return {} if self.host is not None else agent_pids()

    def _add(self, path: Path, session: S, log: SessionLog, mtime: float) -> S:
        self.sessions[str(path)] = session
        self.store.touch(log, mtime)
        return session

    # --- live ---

    async def _watch(self) -> None:
        # This machine's files, watched by inotify: the files clients follow get a watch of
        # their own, so the folders' watch may rest between rounds (files/close_watch.py). A
        # mirror's shared watch (sources/remote/watcher.py) reads every change at once.
        close = CloseWatch.open() if self.watch is watch_paths else None
        if close is not None:
            self._close = close
            self.store.follow_listeners.append(self._now_followed)
            self._tasks.spawn(self._read_followed(close), name=f"{self.agent}-followed")
        try:
            async with self.watch(
                self.dirs,
                accept=self._accept,
                max_depth=self.watch_depth,
                stop_event=self._stop,
                step_ms=self.watch_step_ms,
                rest_s=REST_S if close is not None else 0.0,
            ) as batches:
                # The watches are in place: every later change is seen, so what the listing
                # misses (created after it) arrives as a change, and what it finds is indexed now.
                self._tasks.spawn(self._index(), name=f"{self.agent}-index")
                async for changes in batches:
                    await self._round(changes)
        finally:
            if close is not None:
                self._close = None
                self.store.follow_listeners.remove(self._now_followed)
                close.close()

    async def _round(self, changes: list[tuple[Change, Path]]) -> None:
        """One batch of the folders' watch: ends first, then each file that changed, in order."""
        for change, path in changes:
            if change is Change.deleted:
                self._special.forget(path)
                removed(self.store, self.sessions.get(str(path)), path)
        kinds = {path: change for change, path in changes if change is not Change.deleted}
        close = self._close
        newly, self._newly_close = self._newly_close, set()
        for path in sorted(kinds):
            if close is not None:
                if kinds[path] is Change.modified and path in close and path not in newly:
                    continue  # read as it was written, through its own watch
                owner = self._owner(path)
                if owner is not None and self.store.followed(owner.log):
                    close.add(path)  # before the read: any later write is the close watch's
            await self._changed_safely(path)
            if close is not None:
                # A round reads many files: a followed file's write goes first, and its
                # streams write it out (the loop's next turn) before the round goes on.
                await self._read_written(close, close.take())
            await asyncio.sleep(0)

    async def _read_followed(self, close: CloseWatch) -> None:
        async for paths in close.batches():
            await self._read_written(close, paths)

    async def _read_written(self, close: CloseWatch, paths: list[Path]) -> None:
        for path in paths:
            owner = self._owner(path)
            if owner is None or not self.store.followed(owner.log):
                close.discard(path)  # no one follows it now: back to the folders' watch
            await self._changed_safely(path)

    def _now_followed(self, log: SessionLog) -> None:
        """A client follows `log` from now on: its files are watched closely at once. (Not
        read now: a read that finds nothing new still counts as activity, `_grew`. A write
        before this is in the folders' next round.)"""
        close = self._close
        session = self.sessions.get(log.source_file or "")
        if close is None or session is None:
            return
        for path in self._files_of(session):
            if path not in close:
                close.add(path)
                self._newly_close.add(path)

    def _owner(self, path: Path) -> S | None:
        """The session a file belongs to, if it is known."""
        return self.sessions.get(str(path))

    def _files_of(self, session: S) -> list[Path]:
        """A session's files (its own; a Claude session's sub-agents' too)."""
        return [session.main]

    async def _changed_safely(self, path: Path) -> None:
        try:
            await self._changed(path)
        except Exception:  # one bad file never stops the others
            logger.exception("failed to follow %s", path)

    async def _changed(self, path: Path) -> None:
        if self._special.skip(path) or await self._other_file(path):
            return
        session = self.sessions.get(str(path))
        if session is not None:
            returned(self.store, session.log)
        else:
            if not self._is_own_file(path):
                return
            head = await asyncio.to_thread(self.heads.read, path)
            if head is None:
                return  # not complete yet: the next change brings the rest
            # A new session: its agent has likely just started, so look afresh.
            pids, _ = await asyncio.gather(
                asyncio.to_thread(self._live_agents), self._before_register(path)
            )
            # The startup index may have registered it during those awaits.
            session = self.sessions.get(str(path)) or self._register(path, head, pids)
            if session is None:
                return
        await self._grew(session, "")

    async def _grew(self, session: S, key: str) -> None:
        if self._deferred(session):
            return
        # A change that shows nothing in a session that shows nothing yet is not activity: it
        # would switch followers to an empty session.
        if await self._on_change(session, key) or session.log.items:
            self.store.touch(session.log)
            self._refresh_pid(self.store.workspaces.get(session.log.workspace_id))

    def _refresh_pid(self, ws: Workspace | None) -> None:
        # Runs on every growth, from what the process scan found last (every 2 s, proc_watch.py):
        # a /proc scan of its own here, every 3 s while a workspace had no agent (a file written
        # by something else), held the loop 5-20 ms on a machine running a browser.
        if self.host is not None or ws is None:
            return  # a mirrored host's agents are not this machine's processes
        if ws.pid is None or not pid_alive(ws.pid):
            pid = self.store.agent_dirs.get(ws.directory)
            ws.pid = pid if pid is not None and pid_alive(pid) else None
