"""The browse activity log: one id sequence, a persisted ring per workspace.

Public API (used by `web/activity.py` and the MCP tools):

- `ActivityLog.report(raw) -> ActivityEntry`: validate, redact, truncate, assign `id`, pair an
  end with its start, append to disk, then publish. Raises ValueError (clear message) on bad
  input, StorageError (nothing applied) when the disk refuses the line. Synchronous: no await
  between the disk append and the publish.
- `await ActivityLog.sync()`: make what was reported durable (fsync) before acknowledging it.
- `ActivityLog.entries(workspace_id, limit) -> list[ActivityEntry]`: the latest `limit` entries,
  oldest first, of one workspace (12-hex id) or of all when `workspace_id` is None.
- `since(seq, workspace_id)`, `parse_cursor(id)`, `subscribe()`: what the SSE stream is made of.
- `refs_for(url)`, `latest_workspace()`: latest refs per page; who acted in the browser last.

Ids are `<epoch>.<seq>` with one `seq` counter across all workspaces, so a cursor means the same
on the all-workspaces stream and on a per-workspace one. The epoch lives in `meta.json` and only
changes when that file is lost, so ids continue after a restart instead of starting again at 1.
Entries go to `<root>/<workspace id>.jsonl` (append-only, activity/files.py) before anyone sees
them; each workspace keeps the newest `RING_SIZE` in memory and its file is compacted when it
reaches twice that. If an fsync fails, entries already shown may be lost: the log moves to a new
epoch, so no id can name two entries (clients resuming from an old id get a `gap` reset).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from heapq import merge
from pathlib import Path
from typing import Any

from sidemirror.activity.entries import prepare_entry
from sidemirror.activity.files import ActivityFiles
from sidemirror.activity.ring import Ring
from sidemirror.core.durable import StorageError
from sidemirror.core.models import ActivityEntry
from sidemirror.core.numbers import parse_count
from sidemirror.core.redact import redact_url

logger = logging.getLogger(__name__)
RING_SIZE = 1000
UNSCOPED = "_unscoped"  # file and ring of entries reported without a workspace
_MAX_PENDING_STARTS = 10_000
_MAX_REF_PAGES = 500


@dataclass(eq=False)
class Subscriber:
    """A stream's wake-up flag. Entries are read back from the rings, so nothing queues here
    and a slow client costs no memory; if it falls behind the ring it gets a `gap`."""

    workspace: str | None
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)


def _ms_between(start: str, end: str) -> int | None:
    try:
        delta = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    except (ValueError, TypeError):  # naive vs aware times cannot be compared
        return None
    ms = round(delta.total_seconds() * 1000)
    return ms if ms >= 0 else None


class ActivityLog:
    """See the module docstring. Used from the event loop only (after a load thread at start)."""

    def __init__(self, root: Path, ring_size: int = RING_SIZE) -> None:
        self.root = root
        self.ring_size = ring_size
        self.rings: dict[str, Ring] = {}
        self.seq = 0
        self.directories: dict[str, str] = {}
        self.files = ActivityFiles(root)
        self._subs: set[Subscriber] = set()
        self._starts: OrderedDict[tuple[str, str], ActivityEntry] = OrderedDict()
        self._refs: OrderedDict[str, ActivityEntry] = OrderedDict()
        self._latest_ws: ActivityEntry | None = None
        meta = self.files.read_meta()
        epoch, high_water = meta.get("epoch"), meta.get("seq")
        # Without the meta file the old epoch is unknown: a new one makes old cursors `gap`.
        self.epoch: str = epoch if isinstance(epoch, str) and epoch else secrets.token_hex(4)
        # The rings are read by a thread of their own, started once the server listens
        # (`start_loading`): a restart with thousands of workspaces is not held up by them, nor
        # slowed by sharing the interpreter with the server's own start. Every method that
        # reads or writes the rings first waits for the thread (`_ready`).
        self._loader: threading.Thread | None = threading.Thread(
            target=self._load,
            args=(high_water if isinstance(high_water, int) else 0,),
            name="activity-load",
            daemon=True,
        )
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (tools, tests): read now
            self.start_loading()

    def start_loading(self) -> None:
        """Start reading the rings in the background (a first use starts it too)."""
        if self._loader is not None and self._loader.ident is None:
            self._loader.start()

    def _ready(self) -> None:
        if self._loader is not None:
            self.start_loading()
            self._loader.join()
            self._loader = None

    # --- the public API ---

    def report(self, raw: object) -> ActivityEntry:
        """Record one reported entry (see the module docstring); returns it as stored."""
        self._ready()
        entry, directory = prepare_entry(raw)
        key = entry.workspace or UNSCOPED
        entry.seq = self.seq + 1
        entry.id = f"{self.epoch}.{entry.seq}"
        self._pair(key, entry)
        ring = self._ring(key)
        if self.files.lines(key) >= 2 * self.ring_size:
            self._compact(ring)
        self.files.append(key, self._line(entry, ring.total + 1, directory))
        self.seq = entry.seq  # only once it is on disk
        if directory is not None and entry.workspace is not None:
            self.directories[entry.workspace] = directory
        self._remember(ring, entry)
        for sub in self._subs:
            if sub.workspace is None or sub.workspace == entry.workspace:
                sub.wakeup.set()
        return entry

    async def sync(self) -> None:
        """fsync what was reported, before it is acknowledged. If that fails, entries already
        shown may be lost: the log moves to a new epoch, and StorageError is raised."""
        self._ready()
        try:
            await self.files.sync()
        except OSError as exc:
            logger.error("activity log sync failed (%s): moving to a new epoch", exc)
            self._new_epoch()
            raise StorageError(self.root, exc) from None

    def entries(self, workspace_id: str | None, limit: int) -> list[ActivityEntry]:
        """The newest `limit` entries, oldest first; one workspace, or all when None."""
        self._ready()
        if limit <= 0:
            return []
        if workspace_id is not None:
            ring = self.rings.get(workspace_id)
            return list(ring.entries)[-limit:] if ring else []
        merged = list(
            merge(*(list(r.entries)[-limit:] for r in self.rings.values()), key=lambda e: e.seq)
        )
        return merged[-limit:]

    def since(self, seq: int, workspace_id: str | None) -> tuple[int, list[ActivityEntry]]:
        """(how many entries after `seq` are gone, the ones still held after it, in order)."""
        self._ready()
        if workspace_id is not None:
            ring = self.rings.get(workspace_id)
            return (ring.missed_after(seq), ring.after(seq)) if ring else (0, [])
        held = list(merge(*(r.after(seq) for r in self.rings.values()), key=lambda e: e.seq))
        # Seqs are dense, so everything after `seq` that is not held was evicted (or lost).
        return max(0, self.seq - seq - len(held)), held

    def parse_cursor(self, last_id: str) -> int | None:
        """The seq a Last-Event-ID names in the current epoch, else None (old epoch, garbage)."""
        self._ready()
        epoch, dot, seq = last_id.strip().rpartition(".")
        n = parse_count(seq)
        if not dot or epoch != self.epoch or n is None or n > self.seq:
            return None
        return n

    def evicted_count(self, workspace_id: str | None) -> int:
        """Entries of this epoch no longer held (what a client from another epoch missed)."""
        self._ready()
        rings = (
            self.rings.values()
            if workspace_id is None
            else ([self.rings[workspace_id]] if workspace_id in self.rings else [])
        )
        return sum(r.first_n - 1 for r in rings)

    def subscribe(self, workspace_id: str | None) -> Subscriber:
        sub = Subscriber(workspace_id)
        self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self._subs.discard(sub)

    def refs_for(self, url: str) -> ActivityEntry | None:
        """The latest entry that reported refs for this page (fragment ignored)."""
        self._ready()
        return self._refs.get(_page_key(redact_url(url)))

    def latest_workspace(self) -> tuple[str, str | None, ActivityEntry] | None:
        """(workspace id, directory if known, entry) of the latest agent command, if any."""
        self._ready()
        e = self._latest_ws
        if e is None or e.workspace is None:
            return None
        return e.workspace, self.directories.get(e.workspace), e

    def close(self) -> None:
        self._ready()
        self.files.close()
        self._write_meta()

    # --- bookkeeping shared by report() and _load() ---

    def _ring(self, key: str) -> Ring:
        ring = self.rings.get(key)
        if ring is None:
            ring = self.rings[key] = Ring(key)
        return ring

    def _pair(self, key: str, entry: ActivityEntry) -> None:
        """An end gets its start's id (the start is let go by `_remember`, once stored)."""
        if entry.request_id is None or entry.type != "command_end":
            return
        start = self._starts.get((key, entry.request_id))
        if start is not None:
            entry.start_id = start.id
            if entry.duration_ms is None:
                entry.duration_ms = _ms_between(start.ts, entry.ts)

    def _remember(self, ring: Ring, entry: ActivityEntry) -> None:
        if entry.request_id is not None:
            pair_key = (ring.key, entry.request_id)
            if entry.type == "command_start":
                self._starts[pair_key] = entry
                self._starts.move_to_end(pair_key)
                while len(self._starts) > _MAX_PENDING_STARTS:
                    self._starts.popitem(last=False)
            elif entry.type == "command_end":
                self._starts.pop(pair_key, None)
        ring.entries.append(entry)
        while len(ring.entries) > self.ring_size:
            ring.evicted.append(ring.entries.popleft().seq)
            ring.first_n += 1
        if entry.refs and entry.url:
            page = _page_key(entry.url)
            self._refs[page] = entry
            self._refs.move_to_end(page)
            while len(self._refs) > _MAX_REF_PAGES:
                self._refs.popitem(last=False)
        if entry.workspace and entry.type in ("command_start", "command_end"):
            self._latest_ws = entry

    # --- disk ---

    def _line(self, entry: ActivityEntry, n: int, directory: str | None) -> bytes:
        record: dict[str, Any] = entry.model_dump(mode="json", exclude={"id", "start_id", "link"})
        record["n"] = n
        if entry.start_id is not None:
            record["start_seq"] = int(entry.start_id.rpartition(".")[2])
        if directory is not None:
            record["dir"] = directory
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    def _compact(self, ring: Ring) -> None:
        """Rewrite the ring's file as just the ring, so it stays at most 2x the ring."""
        self._write_meta(strict=True)  # the seq high-water mark must survive the lines going
        # The seqs of evicted entries go first, so a gap is still counted exactly after a restart.
        lines = [json.dumps({"evicted": list(ring.evicted)}, separators=(",", ":")).encode()
                 + b"\n"]  # fmt: skip
        lines += [
            self._line(e, ring.first_n + i, self.directories.get(ring.key) if i == 0 else None)
            for i, e in enumerate(ring.entries)
        ]
        self.files.compact(ring.key, lines)

    def _write_meta(self, strict: bool = False) -> None:
        try:
            self.files.write_meta(self.epoch, self.seq)
        except OSError as exc:
            if strict:
                raise StorageError(self.root, exc) from None
            logger.warning("cannot write the activity meta file: %s", exc)

    def _new_epoch(self) -> None:
        """Entries of this epoch may be lost: relabel every entry held under a new epoch."""
        self.epoch = secrets.token_hex(4)
        for ring in self.rings.values():
            for entry in ring.entries:
                entry.id = f"{self.epoch}.{entry.seq}"
                if entry.start_id is not None:
                    entry.start_id = f"{self.epoch}.{entry.start_id.rpartition('.')[2]}"
        self._write_meta()

    def _load(self, high_water: int) -> None:
        """Rebuild the rings from the files (in the load thread: nothing else touches them)."""
        try:
            records: list[tuple[int, str, dict[str, Any]]] = []
            for found in sorted(self.files.read_all(_let_the_loop_in), key=lambda f: f.key):
                records += [(int(record["seq"]), found.key, record) for record in found.records]
                self._ring(found.key).evicted.extend(found.evicted)
            records.sort(key=lambda r: r[0])
            for n, (seq, key, record) in enumerate(records):
                self._restore(key, seq, record)
                if n % 64 == 0:
                    _let_the_loop_in()
        except Exception:  # a bug must not leave every later call waiting: log, go on
            logger.exception("reading the activity log failed part way")
        self.seq = max(self.seq, high_water)
        self._write_meta()

    def _restore(self, key: str, seq: int, record: dict[str, Any]) -> None:
        n = record.pop("n", None)
        start_seq = record.pop("start_seq", None)
        directory = record.pop("dir", None)
        try:
            entry = ActivityEntry.model_validate(record)
        except ValueError:
            logger.warning("skipping unreadable activity record %s in %s", seq, key)
            return
        entry.id = f"{self.epoch}.{seq}"
        if isinstance(start_seq, int):
            entry.start_id = f"{self.epoch}.{start_seq}"
        if isinstance(directory, str) and entry.workspace:
            self.directories[entry.workspace] = directory
        ring = self._ring(key)
        if not ring.entries and isinstance(n, int) and n > 1:
            ring.first_n = n  # earlier entries were compacted away
        self.seq = max(self.seq, seq)
        self._remember(ring, entry)


def _let_the_loop_in() -> None:
    """Hand the interpreter to the event loop's thread if it waits for it. A busy thread keeps
    it up to 5 ms each time the loop makes a system call: a start with thousands of activity
    files otherwise slowed the server's own start by half a second."""
    time.sleep(0)


def _page_key(url: str) -> str:
    return url.split("#", 1)[0]
