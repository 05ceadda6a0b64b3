"""The ingest journal: one append-only file per pushed session under `<data dir>/ingest/`, so
pushed sessions survive a restart with the same ids (the format is in `replay.py`).

- At start, sessions are indexed from each journal's head and mtime; a session's items are
  replayed only when a client first reads it (the store's lazy loader), so a restart with
  10,000 sessions answers at once.
- `commit` stores the records of a run of input lines, then publishes them: a line is stored
  whole or not at all, and what follows a line that could not be stored is not applied. The
  spill room the session's log will need is reserved first, so a full disk refuses a line
  before the journal holds it (a resend never duplicates it).
- `sync` (once per request) makes what was committed durable before it is acknowledged.
- If stored items could be lost (an fsync failed, or a journal is found damaged), the session
  starts over under a new epoch (clients get `reset`) and its journal is rewritten from what
  the log holds, so no id names two items.
(Not to be confused with a file session's merge order, `sources/files/merge_order.py`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import os
import secrets
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from sidemirror.core.durable import AppendFile, OpenFiles, StorageError, WriteFailed, write_all
from sidemirror.core.models import LIVE_ONLY_TYPES, SessionItem
from sidemirror.core.store import (
    SessionLog,
    SessionUpdate,
    Store,
    workspace_directory,
    workspace_id_for,
)
from sidemirror.ingest.replay import Header, item_line, read_head, replay, title_line
from sidemirror.sources.base import Emitted

logger = logging.getLogger(__name__)
REPLAY_SLICE = 2000  # items applied between yields to the event loop when a session is loaded


@dataclass(eq=False)
class SessionJournal:
    """One session's journal file, and the lock that orders its writes."""

    log: SessionLog
    path: str  # a string, not a Path: indexing 10,000 journals must cost next to nothing
    files: OpenFiles
    end: int | None = None  # bytes of whole lines, once known (the file is opened on first use)
    broken: StorageError | None = None  # its data may be lost and it could not be rewritten
    _file: AppendFile | None = None
    _lock: asyncio.Lock | None = None

    @property
    def lock(self) -> asyncio.Lock:
        """Orders writes to this journal (made on first use: most sessions are never written)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    @property
    def file(self) -> AppendFile:
        if self._file is None:
            self._file = AppendFile(self.files, Path(self.path), self.end)
        return self._file

    def reopen(self, end: int) -> None:
        """The file was replaced (rewritten): the next write opens the new one."""
        if self._file is not None:
            self._file.close()
        self._file, self.end = None, end


class IngestJournal:
    def __init__(self, root: Path, files: OpenFiles | None = None) -> None:
        self.root = root
        self.files = files or OpenFiles()
        self._journals: dict[tuple[str, str], SessionJournal] = {}

    def _path(self, ws_id: str, session_id: str) -> str:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:16]
        return os.path.join(self.root, ws_id, f"{digest}.jsonl")

    # --- start: index every journal from its head ---

    def restore(self, store: Store) -> int:
        """Index every journaled session (read when first used); returns how many."""
        count = 0
        if not self.root.is_dir():
            return 0
        # Indexing makes a dozen long-lived objects a session: with the collector on, 10,000
        # sessions set it walking the whole heap over and over, a fifth of the time for nothing.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for ws_dir in sorted(os.scandir(self.root), key=lambda e: e.name):
                if not ws_dir.is_dir(follow_symlinks=False):
                    continue
                for entry in sorted(os.scandir(ws_dir.path), key=lambda e: e.name):
                    if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                        count += self._index(store, entry.path)
        finally:
            if collecting:
                gc.enable()
        return count

    def _index(self, store: Store, path: str) -> bool:
        try:
            head = read_head(path)
        except OSError as exc:
            logger.warning("cannot read journal %s: %s", path, exc)
            return False
        if head is None:
            # Kept for a look, out of the way of a session that would start afresh there.
            logger.warning("journal %s has no valid header; renamed *.unreadable", path)
            store.count_parse_error()
            with contextlib.suppress(OSError):
                os.replace(path, path + ".unreadable")
            return False
        h = head.header
        ws = store.ensure_workspace(h.directory, h.agent)
        log = store.ensure_session(ws, h.session, h.agent, h.epoch)
        log.title = log.title or head.title
        log.started_at = log.started_at or head.started_at
        store.touch(log, head.mtime)
        journal = SessionJournal(log, path, self.files)
        self._journals[(ws.id, h.session)] = journal
        log.loader = lambda _log: self._load(store, journal)
        return True

    async def _load(self, store: Store, journal: SessionJournal) -> None:
        """Replay a journal into its (empty) log, yielding to the loop between slices."""
        log = journal.log
        try:
            found = await asyncio.to_thread(replay, journal.path)
            if found is None:
                raise OSError(f"{journal.path} lost its header")
        except OSError as exc:
            # Not knowing where its whole lines end, nothing may be appended to it.
            logger.warning("cannot read journal %s: %s", journal.path, exc)
            journal.broken = StorageError(self.root, exc)
            return
        journal.reopen(found.end)
        if found.unreadable:
            store.count_parse_error(found.unreadable)
        log.title = found.title or log.title
        if found.damaged:
            logger.warning("journal %s is damaged: its session starts a new epoch", log.session_id)
            await self._rebuild(store, journal, found.items)
            return
        log.epoch = found.header.epoch
        log.started_at = log.started_at or (found.items[0].ts if found.items else None)
        for start in range(0, len(found.items), REPLAY_SLICE):
            store.write(log, SessionUpdate(items=found.items[start : start + REPLAY_SLICE]))
            await asyncio.sleep(0)

    # --- writing ---

    async def _journal(
        self, store: Store, directory: str, agent: str, session_id: str
    ) -> SessionJournal:
        """The session's journal, loaded; a new session's file starts with its header."""
        ws_id = workspace_id_for(directory)
        ws = store.workspace(ws_id)
        key = (ws_id, session_id)
        journal = self._journals.get(key)
        if journal is not None:
            await store.load(journal.log)
            return journal
        existing = ws.sessions.get(session_id) if ws is not None else None
        epoch = existing.epoch if existing is not None else secrets.token_hex(4)
        ws_dir = ws.directory if ws is not None else workspace_directory(directory)
        header = Header(epoch, ws_dir, session_id, agent)
        path = self._path(ws_id, session_id)
        file = AppendFile(self.files, Path(path), end=0)
        try:
            file.append(header.line())
        except WriteFailed as exc:
            file.cut(0)
            raise StorageError(self.root, exc.error) from None
        ws = store.ensure_workspace(ws_dir, agent)
        log = store.ensure_session(ws, session_id, agent, epoch)
        journal = SessionJournal(log, path, self.files, end=file.end, _file=file)
        self._journals[key] = journal
        return journal

    async def commit(
        self, store: Store, directory: str, agent: str, lines: Sequence[Sequence[Emitted]]
    ) -> tuple[int, set[SessionJournal], StorageError | None]:
        """Store, then publish, what a run of input lines emitted. Returns how many lines were
        stored (a prefix: nothing after a line that could not be stored is applied), the
        journals written, and the error that stopped it."""
        error: StorageError | None = None
        targets: list[list[SessionJournal]] = []
        known: dict[str, SessionJournal] = {}
        for emitted in lines:
            try:
                for e in emitted:
                    if e.session_id not in known:
                        known[e.session_id] = await self._journal(
                            store, directory, agent, e.session_id
                        )
            except StorageError as exc:
                error = exc
                break
            line_targets = [known[e.session_id] for e in emitted]
            broken = next((j.broken for j in line_targets if j.broken is not None), None)
            if broken is not None:  # its data may be lost: nothing more goes into it
                error = broken
                break
            targets.append(line_targets)
        journals = {j for line in targets for j in line}
        async with AsyncExitStack() as locks:
            for journal in sorted(journals, key=lambda j: j.path):
                await locks.enter_async_context(journal.lock)
            # Spill room first: a line whose items the log could not hold whole is refused
            # before the journal has it, so it never comes back after a restart.
            reserved, reserve_error = self._reserve(lines[: len(targets)], targets)
            stored, write_error = self._write(lines[:reserved], targets[:reserved])
            write_error = write_error or reserve_error
            for emitted, line_targets in zip(lines[:stored], targets[:stored], strict=True):
                for e, journal in zip(emitted, line_targets, strict=True):
                    _publish(store, journal.log, e)
        written = {j for line in targets[:stored] for j in line}
        return stored, written, write_error or error

    def _reserve(
        self, lines: Sequence[Sequence[Emitted]], targets: list[list[SessionJournal]]
    ) -> tuple[int, StorageError | None]:
        """Reserve the spill room each log needs for the items of `lines` (core/item_log.py).
        Returns how many lines may be written: where a log's room was refused, the lines from
        its first item on are not (the client resends them from there)."""
        items: dict[SessionJournal, list[SessionItem]] = {}
        first_line: dict[SessionJournal, int] = {}
        for index, (emitted, line_targets) in enumerate(zip(lines, targets, strict=True)):
            for e, journal in zip(emitted, line_targets, strict=True):
                item = _stored_item(e)
                if item is not None:
                    items.setdefault(journal, []).append(item)
                    first_line.setdefault(journal, index)
        allowed = len(lines)
        error: StorageError | None = None
        for journal, wanted in items.items():
            try:
                journal.log.items.reserve(wanted)
            except OSError as exc:
                error = error or StorageError(self.root, exc)
                allowed = min(allowed, first_line[journal])
        return allowed, error

    def _write(
        self, lines: Sequence[Sequence[Emitted]], targets: list[list[SessionJournal]]
    ) -> tuple[int, StorageError | None]:
        """Append each line's records to their journals (one write per journal); cut back
        every journal to the lines stored whole in all of them."""
        buffers: dict[SessionJournal, bytearray] = {}
        ends: dict[SessionJournal, list[tuple[int, int]]] = {}  # (line, its end in the buffer)
        next_seq: dict[SessionJournal, int] = {}
        for index, (emitted, line_targets) in enumerate(zip(lines, targets, strict=True)):
            for e, journal in zip(emitted, line_targets, strict=True):
                buf = buffers.setdefault(journal, bytearray())
                if e.title is not None:
                    buf += title_line(e.title)
                if _stored_item(e) is not None:
                    assert e.item is not None
                    seq = next_seq.get(journal, journal.log.items.last_seq + 1)
                    e.item.seq, next_seq[journal] = seq, seq + 1
                    buf += item_line(e.item)
            for journal in set(line_targets):
                ends.setdefault(journal, []).append((index, len(buffers[journal])))
        stored = len(lines)
        error: StorageError | None = None
        starts: dict[SessionJournal, int | None] = {}
        for journal, buf in buffers.items():
            try:
                journal.file.append(bytes(buf))
                starts[journal] = (journal.file.end or 0) - len(buf)
            except WriteFailed as exc:
                starts[journal] = journal.file.end  # None: the file could not even be opened
                error = error or StorageError(self.root, exc.error)
                torn = (i for i, end in ends[journal] if end > exc.written)
                stored = min(stored, next(torn, stored))
        if error is not None:
            for journal, start in starts.items():
                kept = max((end for i, end in ends[journal] if i < stored), default=0)
                if start is not None:
                    journal.file.cut(start + kept)
        return stored, error

    async def sync(self, store: Store, journals: set[SessionJournal]) -> StorageError | None:
        """fsync the journals a request wrote, before it is acknowledged. A journal whose fsync
        failed may have lost published items: its session starts over under a new epoch, from
        what it holds, in a rewritten journal. The error returned is that of a journal that
        could not be rewritten (its lines are not durable)."""
        for journal in journals:
            try:
                await journal.file.sync()
            except OSError as exc:
                logger.error("fsync of journal %s failed: %s", journal.path, exc)
                async with journal.lock:
                    if journal.broken is None:
                        await self._rebuild(store, journal, list(journal.log.items))
        return next((j.broken for j in journals if j.broken is not None), None)

    async def _rebuild(
        self, store: Store, journal: SessionJournal, items: list[SessionItem]
    ) -> None:
        """Start the session over under a new epoch with `items`, and rewrite its journal."""
        log = journal.log
        epoch = secrets.token_hex(4)
        for item in items:
            item.seq = 0  # renumbered 1, 2, 3… under the new epoch
        store.start_epoch(log, epoch)
        store.write(log, SessionUpdate(items=items))
        header = Header(epoch, store.workspaces[log.workspace_id].directory, log.session_id,
                        log.agent)  # fmt: skip
        try:
            size = await asyncio.to_thread(_rewrite, Path(journal.path), header, log.title, items)
        except OSError as exc:
            logger.error("cannot rewrite journal %s: %s", journal.path, exc)
            journal.broken = StorageError(self.root, exc)
            return
        journal.reopen(size)
        journal.broken = None

    def close(self) -> None:
        self.files.close()


def _stored_item(e: Emitted) -> SessionItem | None:
    """The item a record adds to the log (partial text and progress are live only: never stored)."""
    return e.item if e.item is not None and e.item.type not in LIVE_ONLY_TYPES else None


def _publish(store: Store, log: SessionLog, e: Emitted) -> None:
    item = _stored_item(e)
    live = [e.item] if e.item is not None and item is None else []
    update = SessionUpdate(
        items=[item] if item is not None else [],
        live=live,
        title=e.title,
        started_at=item.ts if item is not None else None,
        touched_at=time.time(),
        state=e.state,
        state_exact=True,  # a pushed run's protocol said it (stream-json, ACP, codex exec)
    )
    store.write(log, update)


def _rewrite(path: Path, header: Header, title: str | None, items: list[SessionItem]) -> int:
    """Replace the journal atomically (written and synced before the rename); returns its size."""
    tmp = path.with_suffix(".tmp")
    data = header.line() + (title_line(title) if title else b"") + b"".join(map(item_line, items))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except WriteFailed as exc:
        raise exc.error from None
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return len(data)
