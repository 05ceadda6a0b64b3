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
import logging
import os
import time
from pathlib import Path

from sidemirror.core.store import Store, Workspace
from sidemirror.sources.claude.agent_attach import AgentAttachments
from sidemirror.sources.claude.agent_files import (
    agent_files_of,
    agent_from_row,
    agent_head,
    agent_id,
    agent_row,
    session_of_agent,
)
from sidemirror.sources.claude.meta import Meta, meta_from_row, meta_row, read_meta
from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.claude.session import ClaudeSession
from sidemirror.sources.files.indexing import (
    IndexProgress,
    Listed,
    Remembered,
    index_source,
    newest_first,
    read_in_batches,
)
from sidemirror.sources.files.regular import SpecialFiles
from sidemirror.sources.files.removed import removed, returned
from sidemirror.sources.files.session import BackgroundTasks
from sidemirror.sources.files.watch import Change, WatchPaths, watch_paths
from sidemirror.sources.proc_watch import follow_agents
from sidemirror.sources.procs import PidCache, pid_alive
from sidemirror.sources.remote.names import ensure_host_workspace

logger = logging.getLogger(__name__)
AGENT = "claude"
PROGRESS_EVERY_S = 2.0
WATCH_DEPTH = 3  # <dir>/<project>/<session>/subagents


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
        watch: WatchPaths = watch_paths,
    ) -> None:
        self.store = store
        self.claude_dirs = claude_dirs
        self.dirs: list[Path] = []  # resolved at start: a dir may be created before then
        self.data_dir = data_dir
        self.journal_dir = data_dir / "claude-merge"
        self.watch_step_ms = watch_step_ms
        self.watch = watch  # a mirror's sources share one watcher (sources/remote/watcher.py)
        self.workspace_name = workspace_name  # the demo labels its workspace
        self.host = host  # files mirrored from another machine: workspaces are `host:/dir`
        # By main transcript path, kept as a string: ten thousand `Path` keys were 5 MB.
        self.sessions: dict[str, ClaudeSession] = {}
        # By (project folder, session id): strings, as an archive makes ten thousand keys.
        self._by_id: dict[tuple[str, str], ClaudeSession] = {}
        self._folders: dict[str, str] = {}
        self._special = SpecialFiles(store)  # FIFOs and such named like transcripts
        self._stop = asyncio.Event()
        self._tasks = BackgroundTasks()
        self._agents = AgentAttachments(self._by_id, self._tasks.spawn, self._grew)
        self.ready = asyncio.Event()  # set once watched and the startup index is done
        self.progress = IndexProgress()
        self._pids = PidCache()

    # --- lifecycle ---

    async def start(self) -> None:
        """Returns at once: the archive is indexed in the background once the watches are in
        place (`_watching`), so the server listens first and no change is missed meanwhile."""
        self.dirs = _distinct_dirs(self.claude_dirs)
        self._tasks.spawn(self._watch(), name="claude-watch")
        # Agents are seen as they start, before they write (proc_watch.py). Not for a remote
        # host's mirror: its agents run on that machine, not among this one's processes.
        if self.host is None:
            self._tasks.spawn(follow_agents(self.store, self._stop), name="agent-pids")

    async def stop(self) -> None:
        self._stop.set()
        await self._tasks.stop()

    # --- discovery ---

    def _list(self) -> tuple[list[Listed], list[Listed], list[Path]]:
        """Main transcripts and sub-agent files, each newest first, and the paths named like
        transcripts that are not regular files (left out: reading one could block, or mean
        nothing)."""
        mains: list[Path] = []
        agents: list[Path] = []
        for root in self.dirs:
            if not root.is_dir():
                continue  # watched for until it appears
            # os.scandir, not Path.glob: a glob costs more than the stat of what it finds.
            for project in _entries(root):
                if not _is_dir(project):
                    continue
                # Each file's path joined to its folder's, not parsed whole: 2 µs a file less,
                # a fifth of what listing 10,000 files cost.
                folder = root / project.name
                for entry in _entries(project.path):
                    if entry.name.endswith(".jsonl"):
                        (agents if entry.name.startswith("agent-") else mains).append(
                            folder / entry.name
                        )
                    elif _is_dir(entry):  # <session>/subagents/agent-*.jsonl
                        for agent in _entries(os.path.join(entry.path, "subagents")):
                            if agent.name.startswith("agent-") and agent.name.endswith(".jsonl"):
                                agents.append(Path(agent.path))
        mains_listed, special = newest_first(mains)
        agents_listed, special_agents = newest_first(agents)
        return mains_listed, agents_listed, special + special_agents

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
        # Before any session is registered: a client may read one as soon as it is listed.
        self._agents.expect(path for path, _ in agents)
        try:
            await self._index_files(mains, agents, pids)
        finally:
            self._agents.finish()
        if time.monotonic() - started > PROGRESS_EVERY_S:
            logger.info(
                "indexed %d Claude Code sessions in %.1fs",
                len(self.sessions),
                time.monotonic() - started,
            )
        self.ready.set()

    async def _index_files(
        self, mains: list[Listed], agents: list[Listed], pids: dict[str, int]
    ) -> None:
        kept = Remembered(self.data_dir, index_source(AGENT, self.host), meta_row, meta_from_row)
        batches = read_in_batches(mains, read_meta, self.progress, "claude-index", kept)
        async for batch in batches:
            for path, meta in batch:
                if meta is not None and str(path) not in self.sessions:
                    self._register(path, meta, pids)
        # After every main transcript, so each sub-agent file finds its session.
        kept_agents = Remembered(
            self.data_dir, index_source("claude-agent", self.host), agent_row, agent_from_row
        )
        found = read_in_batches(agents, agent_head, self.progress, "claude-index", kept_agents)
        async for batch_ in found:
            for path, head in batch_:
                session = None if head is None else self._agents.attach(path, head[0])
                if session is not None and head is not None:
                    self.store.touch(session.log, head[1])

    def _register(
        self, main: Path, item: Meta, pids: dict[str, int] | None = None
    ) -> ClaudeSession:
        ws = ensure_host_workspace(self.store, self.host, item.cwd, AGENT)
        if self.workspace_name:
            ws.name = self.workspace_name
        if item.branch and item.branch != ws.branch:  # most sessions repeat it: redact it once
            ws.branch = item.branch
        if pids is not None and ws.pid != (pid := pids.get(ws.directory)):
            ws.pid = pid
        folder, name = os.path.split(main)
        folder = self._folders.setdefault(folder, folder)  # one string per project folder
        stem = name.removesuffix(".jsonl")
        log_ = self.store.ensure_session(ws, stem, AGENT, "")
        log_.title = item.title
        log_.started_at = item.started_at
        session = ClaudeSession(self.store, log_, main, self.journal_dir, self._tasks.stopping)
        self._agents.adopt(session, folder, stem)
        # Read (loaded, or scanned for search) only with its sub-agent files attached.
        reads = self._agents.reads(session)
        log_.loader, log_.scan = reads.load, reads.scan
        self.sessions[str(main)] = session
        self._by_id[(folder, stem)] = session
        self.store.touch(log_, item.mtime)
        return session

    # --- live ---

    async def _watch(self) -> None:
        async with self.watch(
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
                        removed(self.store, self.sessions.get(str(path)), path)
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
        session = self.sessions.get(str(path))
        if session is not None:
            returned(self.store, session.log)
        else:
            if path.parent.parent not in self.dirs:
                return  # not `<dir>/<project>/<session>.jsonl`
            item = await asyncio.to_thread(read_meta, path)
            if item is None:
                return
            # A new session: its agent has likely just started, so look afresh. Its sub-agent
            # files too: it is read at once, maybe before the startup index lists them.
            pids, agents = await asyncio.gather(
                asyncio.to_thread(self._pids.get, fresh=True),
                asyncio.to_thread(agent_files_of, path),
            )
            self._agents.expect_own(path, *agents)
            # The startup index may have registered it during those awaits.
            session = self.sessions.get(str(path)) or self._register(path, item, pids)
        await self._grew(session, MAIN)

    async def _agent_changed(self, path: Path) -> None:
        session_id = await asyncio.to_thread(session_of_agent, path)
        session = self._agents.attach(path, session_id)
        if session is not None:
            await self._grew(session, agent_id(path))

    async def _grew(self, session: ClaudeSession, key: str) -> None:
        if self._agents.defer(session):
            return
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


def _entries(path: str | Path) -> list[os.DirEntry[str]]:
    """What `path` holds; nothing when it is not a readable directory (gone meanwhile, or a
    session without sub-agents)."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # following symlinks, as a glob does
    except OSError:
        return False


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
