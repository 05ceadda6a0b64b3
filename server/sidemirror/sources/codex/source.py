"""Codex as a source: index rollouts under `<codex home>/sessions/**/rollout-*.jsonl` and
`<codex home>/archived_sessions/` (plain or `.jsonl.zst`: codex/compressed.py), follow them.

A rollout is one append-only file per session, so a deterministic parse from byte 0 gives the
same items at the same positions after a restart. The epoch is kept in a small journal under the
data dir (the `MergeOrder` format with the one file as its only key): it survives restarts while
the file keeps its inode and has not shrunk, and is replaced (with `store.reset`) otherwise.
The server listens first; rollouts are indexed after, in the background, newest first
(`files/indexing.py`), reading only each file's first 64 KiB (session id, cwd, branch, first
prompt) and decoding just the lines that can hold them; a session is parsed when first read
(`SessionLog.loader`) or when it grows. Changes arrive from inotify (`watch`), a sessions dir
created later included.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path

from sidemirror.core.models import SessionItem
from sidemirror.core.store import ParseProblem, SessionLog, SessionUpdate, Store, state_after
from sidemirror.sources.codex.compressed import CompressedRollout, is_compressed
from sidemirror.sources.codex.head import RolloutHead, head_from_row, head_row, read_head
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files.indexing import (
    IndexProgress,
    Listed,
    Remembered,
    index_source,
    newest_first,
    read_in_batches,
)
from sidemirror.sources.files.long_line import mark_cut
from sidemirror.sources.files.merge_order import Entry, MergeOrder, new_epoch
from sidemirror.sources.files.regular import SpecialFiles
from sidemirror.sources.files.removed import removed, returned
from sidemirror.sources.files.session import BackgroundTasks, FileSession
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch
from sidemirror.sources.files.watch import Change, WatchPaths, watch_paths
from sidemirror.sources.remote.names import ensure_host_workspace

logger = logging.getLogger(__name__)
AGENT = "codex"
KEY = ""  # the rollout's key in its journal
WATCH_DEPTH = 3  # sessions/YYYY/MM/DD


ARCHIVED = "archived_sessions"  # where Codex moves rollouts it archives (often compressed)
PATTERNS = ("rollout-*.jsonl", "rollout-*.jsonl.zst")


def _is_rollout(path: Path) -> bool:
    return path.name.startswith("rollout-") and (path.suffix == ".jsonl" or is_compressed(path))


class CodexSession(FileSession):
    # Made by the first load (`_fresh`), not at index time: most indexed sessions are never
    # opened.
    parser: CodexParser
    tailer: JsonlTailer | CompressedRollout
    journal: MergeOrder

    def __init__(
        self,
        store: Store,
        log_: SessionLog,
        path: Path,
        journal_dir: Path,
        stopping: threading.Event | None = None,
    ) -> None:
        super().__init__(store, log_, journal_dir, path, stopping)
        self.path = path

    PARSE_STATE = ("parser", "tailer", "journal")
    __slots__ = ("path", *PARSE_STATE)

    def _fresh(self) -> None:
        self.parser = CodexParser()
        compressed = is_compressed(self.path)
        self.tailer = CompressedRollout(self.path) if compressed else self.new_tailer(self.path)
        self.journal = MergeOrder(None, "")

    def _inode(self) -> int:
        return self.tailer.identity[1] if self.tailer.identity else 0

    def _build(self) -> tuple[str, list[SessionItem], list[ParseProblem]]:
        """Parse the whole file; keep the journal's epoch if the file is still what it saw."""
        self._fresh()
        batch = self.tailer.poll()
        items = self._parse(batch)
        journal = MergeOrder.read(self.journal_path)
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        reusable = (
            journal is not None
            and st is not None
            and all(e.inode == st.st_ino and e.end <= batch.offset for e in journal.entries)
        )
        if journal is not None and reusable:
            self.journal = journal
            journal.append([Entry(KEY, batch.offset, self._inode())])
        else:
            self.journal = MergeOrder(self.journal_path, new_epoch(self.path))
            self.journal.entries = [Entry(KEY, batch.offset, self._inode())]
            self.journal.rewrite()
        return self.journal.epoch, items, batch.problems

    def _parse(self, batch: TailBatch) -> list[SessionItem]:
        items: list[SessionItem] = []
        for _end, record in batch.records:
            items += mark_cut(self.parser.feed(record))  # a capped line's items say so
        return items

    async def on_change(self) -> None:
        if not self.loaded:
            await self.load()
            return
        async with self.lock:
            batch = await self.tailer.poll_async()
            if batch.reset:
                # No longer append-only (truncated or replaced): start over under a new epoch.
                self._fresh()
                batch = await self.tailer.poll_async()
                self.journal = MergeOrder(self.journal_path, new_epoch(self.path))
                self.journal.entries = [Entry(KEY, batch.offset, self._inode())]
                self.journal.rewrite()
                self.store.reset(self.log, self.journal.epoch)
                self._publish(self._parse(batch), batch.problems)
                return
            items = self._parse(batch)
            if batch.records or batch.problems:
                self.journal.append([Entry(KEY, batch.offset, self._inode())])
            self._publish(items, batch.problems)

    def _publish(self, items: list[SessionItem], problems: list[ParseProblem]) -> None:
        # A rollout's title is its first prompt; it never changes once set.
        update = SessionUpdate(
            items=items,
            problems=problems,
            title=self.log.title or self.parser.title,
            started_at=self.parser.started_at,
            branch=self.parser.git_branch,
            state=state_after(items),
        )
        self.store.write(self.log, update)


class CodexSource:
    def __init__(
        self,
        store: Store,
        codex_dir: Path,
        data_dir: Path,
        *,
        watch_step_ms: int = 10,
        host: str | None = None,
        watch: WatchPaths = watch_paths,
    ) -> None:
        self.store = store
        self.host = host  # files mirrored from another machine: workspaces are `host:/dir`
        self.codex_dir = codex_dir.expanduser()
        self.sessions_dir = self.codex_dir / "sessions"
        self.archived_dir = self.codex_dir / ARCHIVED
        self.data_dir = data_dir
        self.journal_dir = data_dir / "codex-epochs"
        self.watch_step_ms = watch_step_ms
        self.watch = watch  # a mirror's sources share one watcher (sources/remote/watcher.py)
        self.sessions: dict[Path, CodexSession] = {}
        self._by_id: dict[str, CodexSession] = {}
        self._twins: dict[Path, CodexSession] = {}  # another file of a registered session
        self._special = SpecialFiles(store)
        self._stop = asyncio.Event()
        self._tasks = BackgroundTasks()
        self.ready = asyncio.Event()  # set once watched and the startup index is done
        self.progress = IndexProgress()

    async def start(self) -> None:
        """Returns at once: rollouts are indexed in the background once the watch is in place."""
        self._tasks.spawn(self._watch(), name="codex-watch")

    async def stop(self) -> None:
        self._stop.set()
        await self._tasks.stop()

    def _list(self) -> tuple[list[Listed], list[Path]]:
        """The rollouts, newest first, and the paths named like one that are not regular files."""
        found = [
            path
            for root in (self.sessions_dir, self.archived_dir)
            if root.is_dir()
            for pattern in PATTERNS
            for path in root.rglob(pattern)
        ]
        return newest_first(found)

    async def _index(self) -> None:
        """Index what is on disk, newest first; a rollout a live change registered first is
        left as it is."""
        rollouts, special = await asyncio.to_thread(self._list)
        for path in special:
            self._special.skip(path)
        self.progress.total = len(rollouts)
        kept = Remembered(self.data_dir, index_source(AGENT, self.host), head_row, head_from_row)
        async for batch in read_in_batches(rollouts, read_head, self.progress, "codex-index", kept):
            for path, head in batch:
                if head is not None and path not in self.sessions:
                    self._register(path, head)
        self.ready.set()

    def _register(self, path: Path, head: RolloutHead) -> CodexSession | None:
        session_id = head.session_id or path.name.split(".", 1)[0]
        twin = self._by_id.get(session_id)
        if twin is not None and twin.path != path:
            # The same rollout under another name: compressed, or moved to archived_sessions/.
            # The one registered first stays; its items are already in the store.
            self._twins[path] = twin
            return None
        ws = ensure_host_workspace(self.store, self.host, head.cwd, AGENT)
        if head.git_branch and head.git_branch != ws.branch:
            ws.branch = head.git_branch
        log_ = self.store.ensure_session(ws, session_id, AGENT, "")
        log_.title = head.title
        log_.started_at = head.started_at
        log_.parent_id = head.parent_thread_id
        session = CodexSession(self.store, log_, path, self.journal_dir, self._tasks.stopping)
        log_.loader = session.load
        self.sessions[path] = session
        self._by_id[session_id] = session
        self.store.touch(log_, head.mtime)
        return session

    async def _watch(self) -> None:
        # No Codex here yet: the watcher waits for the sessions dir to appear.
        async with self.watch(
            [self.sessions_dir, self.archived_dir],
            accept=_is_rollout,
            max_depth=WATCH_DEPTH,
            stop_event=self._stop,
            step_ms=self.watch_step_ms,
        ) as batches:
            # Every later change is seen: index what is there now.
            self._tasks.spawn(self._index(), name="codex-index")
            async for changes in batches:
                for change, path in changes:
                    if change is Change.deleted:
                        self._special.forget(path)
                        removed(self.store, self.sessions.get(path), path)
                for path in sorted({p for change, p in changes if change is not Change.deleted}):
                    try:
                        await self._changed(path)
                    except Exception:  # one bad file never stops the others
                        logger.exception("failed to follow %s", path)

    async def _changed(self, path: Path) -> None:
        if self._special.skip(path):
            return
        if path in self._twins:
            return
        session = self.sessions.get(path)
        if session is not None:
            returned(self.store, session.log)
        else:
            head = await asyncio.to_thread(read_head, path)
            if head is None:
                return  # its `session_meta` line is not complete yet: the next change brings it
            # The startup index may have registered it during that await.
            session = self.sessions.get(path) or self._register(path, head)
            if session is None:
                return
        await session.on_change()
        self.store.touch(session.log)
