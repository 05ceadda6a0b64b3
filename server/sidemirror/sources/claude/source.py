"""Claude Code as a source: find transcripts, index them cheaply, follow them live.

Layout (`<dir>` is a `projects` folder): `<dir>/<encoded cwd>/<session>.jsonl` is a session;
sub-agents write `<dir>/<encoded cwd>/agent-<id>.jsonl` (older) or `<session>/subagents/agent-<id>
.jsonl` (newer). Workspaces are keyed by the `cwd` recorded inside the files: the folder name's
encoding is lossy (`/` and `.` both become `-`) and is never decoded.

Startup reads only a little of each file's head and tail (cwd, branch, title: `claude_meta`), a
few files at a time, so a thousand archived sessions index in about a second, cold; a session is
parsed when first read (`SessionLog.loader`) or when it grows while watched. Changes arrive from
inotify (`watch`): an idle machine costs no wake-ups, and a Claude dir created later is picked up.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sidemirror.core.store import SessionLog, Store, Workspace
from sidemirror.sources.claude.meta import agent_session_id, read_meta
from sidemirror.sources.claude.parser import MAIN
from sidemirror.sources.claude.session import ClaudeSession
from sidemirror.sources.files.regular import SpecialFiles, special_reason
from sidemirror.sources.files.session import BackgroundTasks
from sidemirror.sources.files.watch import Change, watch_paths
from sidemirror.sources.procs import PidCache, pid_alive

logger = logging.getLogger(__name__)
AGENT = "claude"
PROGRESS_EVERY_S = 2.0
PID_CHECK_S = 15.0
INDEX_THREADS = 8  # startup reads overlap their disk waits; parsing them is cheap now
WATCH_DEPTH = 3  # <dir>/<project>/<session>/subagents


@dataclass
class _Found:
    main: Path
    cwd: str
    title: str | None
    started_at: str | None
    branch: str | None
    mtime: float
    agents: dict[str, Path] = field(default_factory=dict)


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
    ) -> None:
        self.store = store
        self.claude_dirs = claude_dirs
        self.dirs: list[Path] = []  # resolved at start: a dir may be created before then
        self.journal_dir = data_dir / "claude-merge"
        self.watch_step_ms = watch_step_ms
        self.workspace_name = workspace_name  # the demo labels its workspace
        self.sessions: dict[Path, ClaudeSession] = {}  # by main transcript path
        self._by_id: dict[tuple[Path, str], ClaudeSession] = {}  # (project folder, session id)
        self._orphans: dict[tuple[Path, str], dict[str, Path]] = {}  # agent files seen first
        self._special = SpecialFiles(store)  # FIFOs and such named like transcripts
        self._stop = asyncio.Event()
        self._tasks = BackgroundTasks()
        self.ready = asyncio.Event()  # set once the watcher is running
        self._pids = PidCache()

    # --- lifecycle ---

    async def start(self) -> None:
        self.dirs = _distinct_dirs(self.claude_dirs)
        (found, special), pids = await asyncio.gather(
            asyncio.to_thread(self._scan), asyncio.to_thread(self._pids.get, fresh=True)
        )
        for path in special:
            self._special.skip(path)
        for item in found:
            self._register(item, pids)
        self._tasks.spawn(self._watch(), name="claude-watch")
        self._tasks.spawn(self._check_pids(), name="claude-pids")

    async def stop(self) -> None:
        self._stop.set()
        await self._tasks.stop()

    # --- discovery ---

    def _scan(self) -> tuple[list[_Found], list[Path]]:
        """The sessions indexed, and the paths named like transcripts that are not regular
        files (left out: reading one could block, or mean nothing)."""
        mains: list[Path] = []
        agents: list[Path] = []
        special: list[Path] = []
        for root in self.dirs:
            if not root.is_dir():
                continue  # watched for until it appears
            for project in sorted(p for p in root.iterdir() if p.is_dir()):
                nested = project.glob("*/subagents/agent-*.jsonl")
                for path in [*sorted(project.glob("*.jsonl")), *sorted(nested)]:
                    if special_reason(path) is not None:
                        special.append(path)
                    elif path.name.startswith("agent-"):
                        agents.append(path)
                    else:
                        mains.append(path)
        found: list[_Found] = []
        started = last_report = time.monotonic()
        by_session: dict[tuple[Path, str], _Found] = {}
        # Cold, most of a file's cost is waiting for the disk: a few reads in flight at once.
        with ThreadPoolExecutor(INDEX_THREADS, thread_name_prefix="claude-index") as pool:
            indexed = zip(mains, pool.map(_index_main, mains), strict=True)
            for n, (path, item) in enumerate(indexed, 1):
                if item is not None:
                    found.append(item)
                    by_session[(path.parent, path.stem)] = item
                if time.monotonic() - last_report > PROGRESS_EVERY_S:
                    last_report = time.monotonic()
                    logger.info("indexing Claude Code sessions: %d/%d", n, len(mains))
            owners = list(pool.map(_session_of_agent, agents))
        for path, session_id in zip(agents, owners, strict=True):
            project = path.parent.parent.parent if path.parent.name == "subagents" else path.parent
            owner = by_session.get((project, session_id)) if session_id else None
            if owner is not None:
                owner.agents[_agent_id(path)] = path
                owner.mtime = max(owner.mtime, _mtime(path))
        if time.monotonic() - started > PROGRESS_EVERY_S:
            logger.info(
                "indexed %d Claude Code sessions in %.1fs", len(found), time.monotonic() - started
            )
        return found, special

    def _register(self, item: _Found, pids: dict[str, int] | None = None) -> ClaudeSession:
        ws = self.store.ensure_workspace(item.cwd, AGENT)
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
        for agent_id, path in sorted(item.agents.items()):
            session.add_agent(agent_id, path)
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
                paths = sorted({p for change, p in changes if change is not Change.deleted})
                for path in paths:
                    await self._follow(path)

    def _watching(self) -> None:
        self.ready.set()
        # Sessions created between the startup scan and the watch: pick them up now.
        missed = [
            path
            for root in self.dirs
            if root.is_dir()
            for path in sorted(root.glob("*/*.jsonl"))
            if not path.name.startswith("agent-") and path not in self.sessions
        ]
        if missed:
            self._tasks.spawn(self._follow_all(missed))

    async def _follow_all(self, paths: list[Path]) -> None:
        for path in paths:
            await self._follow(path)

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
        if session is None:
            if path.parent.parent not in self.dirs:
                return  # not `<dir>/<project>/<session>.jsonl`
            item = await asyncio.to_thread(_index_main, path)
            if item is None:
                return
            # A new session: its agent has likely just started, so look afresh.
            session = self._register(item, await asyncio.to_thread(self._pids.get, fresh=True))
        await self._grew(session, MAIN)

    async def _agent_changed(self, path: Path) -> None:
        nested = path.parent.name == "subagents"
        project = path.parent.parent.parent if nested else path.parent
        session_id = await asyncio.to_thread(_session_of_agent, path)
        if session_id is None:
            return  # its first line is not complete yet: the next change brings it
        session = self._by_id.get((project, session_id))
        agent_id = _agent_id(path)
        if session is None:
            self._orphans.setdefault((project, session_id), {})[agent_id] = path
            return
        session.add_agent(agent_id, path)
        await self._grew(session, agent_id)

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

    async def _check_pids(self) -> None:
        """Clear pids of agents that exited; only runs work while some agent is known alive."""
        while not self._stop.is_set():
            await asyncio.sleep(PID_CHECK_S)
            for ws in list(self.store.workspaces.values()):
                if ws.pid is not None and ws.agent == AGENT and not pid_alive(ws.pid):
                    ws.pid = None

    def session_for(self, log_: SessionLog) -> ClaudeSession | None:
        return next((s for s in self.sessions.values() if s.log is log_), None)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


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
