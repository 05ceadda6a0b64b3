"""Codex as a source: index rollouts under `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl` and
`<codex home>/archived_sessions/` (plain or `.jsonl.zst`: codex/compressed.py), follow them.
Both are listed as deep as they are watched (`files/listing.walk`, three levels), and the
lifecycle is `files/source.py`'s: this says which files are rollouts, that a copy of a rollout
under another name (compressed, archived) is a twin of the session first seen, and how one is
read.

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

import os
import threading
from pathlib import Path
from typing import Unpack

from sidemirror.core.models import SessionItem
from sidemirror.core.store import ParseProblem, SessionLog, SessionUpdate, Store, state_after
from sidemirror.sources.codex.compressed import SUFFIX, CompressedRollout, is_compressed
from sidemirror.sources.codex.head import RolloutHead, head_from_row, head_row, read_head
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files.indexing import newest_first
from sidemirror.sources.files.listing import walk
from sidemirror.sources.files.long_line import mark_cut
from sidemirror.sources.files.merge_order import Entry, MergeOrder, new_epoch
from sidemirror.sources.files.session import FileSession
from sidemirror.sources.files.source import FileSource, Heads, Listing, Options
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

AGENT = "codex"
KEY = ""  # the rollout's key in its journal


ARCHIVED = "archived_sessions"  # where Codex moves rollouts it archives (often compressed)


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

    async def on_change(self) -> bool:
        """The rollout changed; returns True if items were published."""
        if not self.loaded:
            await self.load()
            return bool(self.log.items)
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
                return True
            items = self._parse(batch)
            if batch.records or batch.problems:
                self.journal.append([Entry(KEY, batch.offset, self._inode())])
            self._publish(items, batch.problems)
            return bool(items)

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


class CodexSource(FileSource[CodexSession, RolloutHead]):
    agent = AGENT
    label = "Codex directory"
    watch_depth = 3  # sessions/YYYY/MM/DD
    heads = Heads(AGENT, read_head, head_row, head_from_row)

    def __init__(
        self, store: Store, codex_dir: Path, data_dir: Path, **options: Unpack[Options]
    ) -> None:
        self.codex_dir = codex_dir.expanduser()
        self.sessions_dir = self.codex_dir / "sessions"
        self.archived_dir = self.codex_dir / ARCHIVED
        # No Codex here yet: the watcher waits for the sessions dir to appear.
        roots = [self.sessions_dir, self.archived_dir]
        super().__init__(store, roots, data_dir, **options)
        self.journal_dir = data_dir / "codex-epochs"
        self._by_id: dict[str, CodexSession] = {}
        self._twins: dict[Path, CodexSession] = {}  # another file of a registered session

    def _accept(self, path: Path) -> bool:
        return _is_rollout_name(path.name)

    def _list(self) -> Listing:
        """The rollouts, newest first: each root walked as deep as it is watched."""
        found = [
            path for root in self.dirs for path in walk(root, self.watch_depth, _is_rollout_name)
        ]
        rollouts, special = newest_first(found)
        return Listing(rollouts, [], special)

    def _register(self, path: Path, head: RolloutHead, pids: dict[str, int]) -> CodexSession | None:
        session_id = head.session_id or path.name.split(".", 1)[0]
        twin = self._by_id.get(session_id)
        if twin is not None and twin.path != path:
            # The same rollout under another name: compressed, or moved to archived_sessions/.
            # The one registered first stays; its items are already in the store.
            self._twins[path] = twin
            return None
        ws = self._workspace(head.cwd, head.git_branch, pids)
        log_ = self.store.ensure_session(ws, session_id, AGENT, "")
        log_.title = head.title
        log_.started_at = head.started_at
        log_.parent_id = head.parent_thread_id
        session = CodexSession(self.store, log_, path, self.journal_dir, self._tasks.stopping)
        log_.loader = session.load
        self._by_id[session_id] = session
        return self._add(path, session, log_, head.mtime)

    async def _other_file(self, path: Path) -> bool:
        return path in self._twins

    async def _on_change(self, session: CodexSession, key: str) -> bool:
        return await session.on_change()


def _is_rollout_name(name: str) -> bool:
    # Names only: the listing calls it on every entry of the tree, before any stat.
    return name.startswith("rollout-") and name.endswith((".jsonl", SUFFIX))
