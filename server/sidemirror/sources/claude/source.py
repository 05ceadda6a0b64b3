"""Claude Code as a source: find transcripts, index them cheaply, follow them live.

Layout (`<dir>` is a `projects` folder): `<dir>/<encoded cwd>/<session>.jsonl` is a session;
sub-agents write `<dir>/<encoded cwd>/agent-<id>.jsonl` (older) or `<session>/subagents/agent-<id>
.jsonl` (newer). Workspaces are keyed by the `cwd` recorded inside the files: the folder name's
encoding is lossy (`/` and `.` both become `-`) and is never decoded.

The server listens first; the archive is indexed after, in the background, newest files first
(`files/indexing.py`), reading only a little of each file's head and tail (cwd, branch, title:
`meta.py`); a session is parsed when first read (`SessionLog.loader`) or when it grows while
watched. Changes arrive from
inotify (`watch`): an idle machine costs no wake-ups, and a Claude dir created later is picked up.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from sidemirror.core.store import SessionLog, Store, Workspace
from sidemirror.sources.claude.meta import agent_session_id, read_meta
from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.claude.session import ClaudeSession
from sidemirror.sources.files.indexing import IndexProgress, mtime, newest_first, read_in_batches
from sidemirror.sources.files.regular import SpecialFiles, special_reason
from sidemirror.sources.files.removed import removed, returned
from sidemirror.sources.files.session import BackgroundTasks
from sidemirror.sources.files.watch import Change, watch_paths
from sidemirror.sources.proc_watch import follow_agents
from sidemirror.sources.procs import PidCache, pid_alive
from sidemirror.sources.remote.names import ensure_host_workspace

logger = logging.getLogger(__name__)
AGENT = "claude"
PROGRESS_EVERY_S = 2.0
WATCH_DEPTH = 3  # <dir>/<project>/<session>/subagents


@dataclass
class _Found:
    main: Path
    cwd: str
    title: str | None
    started_at: str | None
    branch: str | None
    mtime: float


def _agent_id(path: Path) -> str:
    return path.stem[len("agent-") :]


def _session_of_agent(path: Path) -> str | None:
    """The parent session of a sub-agent file: its folder (newer layout) or its `sessionId`."""
    if path.parent.name == "subagents":
        return path.parent.parent.name
    return agent_session_id(path)


def _index_main(path: Path) -> _Found | None:
    """cwd, title and branch from the head and tail of a transcript, without parsing it all."""
    meta = read_meta(path)
    if meta is None:
        return None  # nothing says which workspace yet; indexed when it grows
    return _Found(path, meta.cwd, meta.title, meta.started_at, meta.branch, meta.mtime)


def _is_transcript(path: Path) -> bool:
    return path.suffix == ".jsonl"


class ClaudeSource:
    def __init__(
        self,
        store: Store,
        claude_dirs: list[Path],
        data_dir: Path,
        *,
        watch_step_ms: int = 10,
        workspace_name: str | None = None,
        host: str | None = None,
    ) -> None:
        self.store = store
        self.claude_dirs = claude_dirs
        self.dirs: list[Path] = []  # resolved at start: a dir may be created before then
        self.journal_dir = data_dir / "claude-merge"
        self.watch_step_ms = watch_step_ms
        self.workspace_name = workspace_name  # the demo labels its workspace
        self.host = host  # files mirrored from another machine: workspaces are `host:/dir`
        self.sessions: dict[Path, ClaudeSession] = {}  # by main transcript path
        self._by_id: dict[tuple[Path, str], ClaudeSession] = {}  # (project folder, session id)
        self._orphans: dict[tuple[Path, str], dict[str, Path]] = {}  # agent files seen first
        self._special = SpecialFiles(store)  # FIFOs and such named like transcripts
        self._stop = asyncio.Event()
        self._tasks = BackgroundTasks()
        self.ready = asyncio.Event()  # set once watched and the startup index is done
        self.progress = IndexProgress()
        self._pids = PidCache()

    # --- lifecycle ---

    async def start(self) -> None:
        """Returns at once: the archive is indexed in the background once the watches are in
        place (`_watching`), so the server listens first and no change is missed meanwhile."""
        self.dirs = _distinct_dirs(self.claude_dirs)
        self._tasks.spawn(self._watch(), name="claude-watch")
        # Agents are seen as they start, before they write (proc_watch.py).
        self._tasks.spawn(follow_agents(self.store, self._stop), name="agent-pids")

    async def stop(self) -> None:
        self._stop.set()
        await self._tasks.stop()

    # --- discovery ---

    def _list(self) -> tuple[list[Path], list[Path], list[Path]]:
        """Main transcripts (newest first), sub-agent files, and the paths named like transcripts
        that are not regular files (left out: reading one could block, or mean nothing)."""
        mains: list[Path] = []
        agents: list[Path] = []
        special: list[Path] = []
        for root in self.dirs:
            if not root.is_dir():
                continue  # watched for until it appears
            for project in (p for p in root.iterdir() if p.is_dir()):
                nested = project.glob("*/subagents/agent-*.jsonl")
                for path in [*project.glob("*.jsonl"), *nested]:
                    if special_reason(path) is not None:
                        special.append(path)
                    elif path.name.startswith("agent-"):
                        agents.append(path)
                    else:
                        mains.append(path)
        return newest_first(mains), agents, special

    async def _index(self) -> None:
        """Index what is on disk, newest first: the listing fills while clients already read it.
        A session a live change registered first is left as it is."""
        started = time.monotonic()
        (mains, agents, special), pids = await asyncio.gather(
            asyncio.to_thread(self._list), asyncio.to_thread(self._pids.get, fresh=True)
        )
        for path in special:
            self._special.skip(path)
        self.progress.total = len(mains) + len(agents)
        async for batch in read_in_batches(mains, _index_main, self.progress, "claude-index"):
            for path, item in batch:
                if item is not None and path not in self.sessions:
                    self._register(item, pids)
        # After every main transcript, so each sub-agent file finds its session.
        async for found in read_in_batches(agents, _agent_head, self.progress, "claude-index"):
            for path, (session_id, when) in found:
                session = self._attach(path, session_id)
                if session is not None:
                    self.store.touch(session.log, when)
        if time.monotonic() - started > PROGRESS_EVERY_S:
            logger.info(
                "indexed %d Claude Code sessions in %.1fs",
                len(self.sessions),
                time.monotonic() - started,
            )
        self.ready.set()

    def _register(self, item: _Found, pids: dict[str, int] | None = None) -> ClaudeSession:
        ws = ensure_host_workspace(self.store, self.host, item.cwd, AGENT)
        if self.workspace_name:
            ws.name = self.workspace_name
        if item.branch:
            ws.branch = item.branch
        if pids is not None:
            ws.pid = pids.get(ws.directory)
        log_ = self.store.ensure_session(ws, item.main.stem, AGENT, "")
        log_.title = item.title
        log_.started_at = item.started_at
        digest = hashlib.sha256(str(item.main).encode("utf-8")).hexdigest()[:16]
        journal = self.journal_dir / f"{digest}.jsonl"
        session = ClaudeSession(self.store, log_, item.main, journal, self._tasks.stopping)
        for agent_id, path in self._orphans.pop((item.main.parent, item.main.stem), {}).items():
            session.add_agent(agent_id, path)
        log_.loader = session.load
        self.sessions[item.main] = session
        self._by_id[(item.main.parent, item.main.stem)] = session
        self.store.touch(log_, item.mtime)
        return session

    # --- live ---

    async def _watch(self) -> None:
        async with watch_paths(
            self.dirs,
            accept=_is_transcript,
            max_depth=WATCH_DEPTH,
            stop_event=self._stop,
            step_ms=self.watch_step_ms,
        ) as batches:
            self._watching()  # the watches are in place: every later change is seen
            async for changes in batches:
                for change, path in changes:
                    if change is Change.deleted:
                        self._special.forget(path)
                        removed(self.store, self.sessions.get(path), path)
                paths = sorted({p for change, p in changes if change is not Change.deleted})
                for path in paths:
                    await self._follow(path)

    def _watching(self) -> None:
        # The watches are in place: every later change is seen, so what the listing misses
        # (created after it) arrives as a change, and what it finds is indexed now.
        self._tasks.spawn(self._index(), name="claude-index")

    async def _follow(self, path: Path) -> None:
        try:
            await self._changed(path)
        except Exception:  # one bad file never stops the others
            logger.exception("failed to follow %s", path)

    async def _changed(self, path: Path) -> None:
        if self._special.skip(path):
            return
        if path.name.startswith("agent-"):
            await self._agent_changed(path)
            return
        session = self.sessions.get(path)
        if session is not None:
            returned(self.store, session.log)
        else:
            if path.parent.parent not in self.dirs:
                return  # not `<dir>/<project>/<session>.jsonl`
            item = await asyncio.to_thread(_index_main, path)
            if item is None:
                return
            # A new session: its agent has likely just started, so look afresh.
            pids = await asyncio.to_thread(self._pids.get, fresh=True)
            # The startup index may have registered it during those awaits.
            session = self.sessions.get(path) or self._register(item, pids)
        await self._grew(session, MAIN)

    async def _agent_changed(self, path: Path) -> None:
        session_id = await asyncio.to_thread(_session_of_agent, path)
        session = self._attach(path, session_id)
        if session is not None:
            await self._grew(session, _agent_id(path))

    def _attach(self, path: Path, session_id: str | None) -> ClaudeSession | None:
        """The session a sub-agent file belongs to, with the file added; None until known (the
        file is kept as an orphan until its session is registered)."""
        if session_id is None:
            return None  # its first line is not complete yet: the next change brings it
        project = path.parent.parent.parent if path.parent.name == "subagents" else path.parent
        session = self._by_id.get((project, session_id))
        if session is None:
            self._orphans.setdefault((project, session_id), {})[_agent_id(path)] = path
            return None
        session.add_agent(_agent_id(path), path)
        return session

    async def _grew(self, session: ClaudeSession, key: str) -> None:
        published = await session.on_change(key)
        if published or session.log.items:
            self.store.touch(session.log)
            # After the streams woken by this publish have written (they were scheduled first):
            # a /proc scan, when the cache is stale, is milliseconds that no event should wait.
            ws = self.store.workspaces.get(session.log.workspace_id)
            asyncio.get_running_loop().call_soon(self._refresh_pid, ws)

    def _refresh_pid(self, ws: Workspace | None) -> None:
        # Runs on every growth: a workspace without a live agent (an agent this cannot see, or a
        # file written by something else) must not cost a /proc scan per write, hence the cache.
        if ws is not None and (ws.pid is None or not pid_alive(ws.pid)):
            ws.pid = self._pids.get().get(ws.directory)

    def session_for(self, log_: SessionLog) -> ClaudeSession | None:
        return next((s for s in self.sessions.values() if s.log is log_), None)


def _agent_head(path: Path) -> tuple[str | None, float]:
    """A sub-agent file's session and modification time, read at startup."""
    return _session_of_agent(path), mtime(path)


def _distinct_dirs(dirs: list[Path]) -> list[Path]:
    """Each dir once even when reached by two paths (symlinks, `~` and `$HOME`); a dir that does
    not exist yet is kept: the watcher waits for it (Claude Code creates it on first use)."""
    seen: set[Path] = set()
    out: list[Path] = []
    for d in dirs:
        real = d.expanduser().resolve()
        if real.exists() and not real.is_dir():
            logger.warning("Claude Code directory %s is not a directory; not watching it", d)
            continue
        if not real.exists():
            logger.info("Claude Code directory %s does not exist yet; watching for it", d)
        if real not in seen:
            seen.add(real)
            out.append(real)
    return out
