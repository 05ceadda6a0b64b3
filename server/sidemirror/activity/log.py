"""The browse activity log: one id sequence, a persisted ring per workspace.

Public API (used by `web/activity.py` and the MCP tools):

- `ActivityLog.report(raw) -> ActivityEntry`: validate, redact, truncate, assign `id`, pair an
  end with its start, append to disk, then publish. Raises ValueError (clear message) on bad
  input. Synchronous: no await between the disk append and the publish.
- `ActivityLog.entries(workspace_id, limit) -> list[ActivityEntry]`: the latest `limit` entries,
  oldest first, of one workspace (12-hex id) or of all when `workspace_id` is None.
- `since(seq, workspace_id)`, `parse_cursor(id)`, `subscribe()`: what the SSE stream is made of.
- `refs_for(url)`, `latest_workspace()`: latest refs per page; who acted in the browser last.

Ids are `<epoch>.<seq>` with one `seq` counter across all workspaces, so a cursor means the same
on the all-workspaces stream and on a per-workspace one. The epoch lives in `meta.json` and only
changes when that file is lost, so ids continue after a restart instead of starting again at 1.
Entries go to `<root>/<workspace id>.jsonl` (append-only) before anyone sees them; each workspace
keeps the newest `RING_SIZE` in memory and its file is compacted when it reaches twice that.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import logging
import os
import secrets
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime
from heapq import merge
from pathlib import Path
from typing import Any

from sidemirror.activity.entries import prepare_entry
from sidemirror.core.models import ActivityEntry
from sidemirror.core.private import open_private, private_dir, write_private
from sidemirror.core.redact import redact_url

logger = logging.getLogger(__name__)
RING_SIZE = 1000
UNSCOPED = "_unscoped"  # file and ring of entries reported without a workspace
META_FILE = "meta.json"
FORMAT = 1
_EVICTED_MEMORY = 4 * RING_SIZE  # seqs of evicted entries kept to count a gap exactly
_MAX_PENDING_STARTS = 10_000
_MAX_REF_PAGES = 500


@dataclass(eq=False)
class _Ring:
    """One workspace's newest entries; `first_n` is the workspace ordinal of `entries[0]`."""

    key: str
    entries: deque[ActivityEntry] = field(default_factory=deque)
    first_n: int = 1
    evicted: deque[int] = field(default_factory=lambda: deque(maxlen=_EVICTED_MEMORY))
    file_lines: int = 0

    @property
    def total(self) -> int:
        return self.first_n - 1 + len(self.entries)

    def seqs(self) -> list[int]:
        return [e.seq for e in self.entries]

    def after(self, seq: int) -> list[ActivityEntry]:
        start = bisect.bisect_right(self.seqs(), seq)
        return list(self.entries)[start:]

    def missed_after(self, seq: int) -> int:
        """Evicted entries newer than `seq` (an over-estimate only past the evicted memory)."""
        if not self.entries or seq >= self.entries[0].seq:
            return 0
        remembered = len(self.evicted) - bisect.bisect_right(self.evicted, seq)
        forgotten = self.first_n - 1 - len(self.evicted)
        older_than_memory = not self.evicted or seq < self.evicted[0]
        return remembered + (forgotten if older_than_memory else 0)


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
    """See the module docstring. Not thread-safe; used from the event loop only."""

    def __init__(self, root: Path, ring_size: int = RING_SIZE) -> None:
        self.root = root
        self.ring_size = ring_size
        self.rings: dict[str, _Ring] = {}
        self.seq = 0
        self.epoch = ""
        self.directories: dict[str, str] = {}
        self._fds: dict[str, int] = {}
        self._subs: set[Subscriber] = set()
        self._starts: OrderedDict[tuple[str, str], ActivityEntry] = OrderedDict()
        self._refs: OrderedDict[str, ActivityEntry] = OrderedDict()
        self._latest_ws: ActivityEntry | None = None
        self._load()

    # --- the public API ---

    def report(self, raw: object) -> ActivityEntry:
        """Record one reported entry (see the module docstring); returns it as stored."""
        entry, directory = prepare_entry(raw)
        key = entry.workspace or UNSCOPED
        if directory is not None and entry.workspace is not None:
            self.directories[entry.workspace] = directory
        entry.seq = self.seq + 1
        entry.id = f"{self.epoch}.{entry.seq}"
        self._pair(key, entry)
        ring = self._ring(key)
        self._append_line(ring, self._line(entry, ring.total + 1, directory))
        self.seq = entry.seq  # only once it is on disk
        self._remember(ring, entry)
        for sub in self._subs:
            if sub.workspace is None or sub.workspace == entry.workspace:
                sub.wakeup.set()
        return entry

    def entries(self, workspace_id: str | None, limit: int) -> list[ActivityEntry]:
        """The newest `limit` entries, oldest first; one workspace, or all when None."""
        if limit <= 0:
            return []
        if workspace_id is not None:
            ring = self.rings.get(workspace_id)
            return list(ring.entries)[-limit:] if ring else []
        merged = list(merge(*(list(r.entries)[-limit:] for r in self.rings.values()),
                            key=lambda e: e.seq))
        return merged[-limit:]

    def since(self, seq: int, workspace_id: str | None) -> tuple[int, list[ActivityEntry]]:
        """(how many entries after `seq` are gone, the ones still held after it, in order)."""
        if workspace_id is not None:
            ring = self.rings.get(workspace_id)
            return (ring.missed_after(seq), ring.after(seq)) if ring else (0, [])
        held = list(merge(*(r.after(seq) for r in self.rings.values()), key=lambda e: e.seq))
        # Seqs are dense, so everything after `seq` that is not held was evicted (or lost).
        return max(0, self.seq - seq - len(held)), held

    def parse_cursor(self, last_id: str) -> int | None:
        """The seq a Last-Event-ID names in the current epoch, else None (old epoch, garbage)."""
        epoch, dot, seq = last_id.strip().rpartition(".")
        if not dot or epoch != self.epoch or not seq.isdigit() or int(seq) > self.seq:
            return None
        return int(seq)

    def evicted_count(self, workspace_id: str | None) -> int:
        """Entries of this epoch no longer held (what a client from another epoch missed)."""
        rings = self.rings.values() if workspace_id is None else (
            [self.rings[workspace_id]] if workspace_id in self.rings else []
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
        return self._refs.get(_page_key(redact_url(url)))

    def latest_workspace(self) -> tuple[str, str | None, ActivityEntry] | None:
        """(workspace id, directory if known, entry) of the latest agent command, if any."""
        e = self._latest_ws
        if e is None or e.workspace is None:
            return None
        return e.workspace, self.directories.get(e.workspace), e

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._write_meta()

    # --- bookkeeping shared by report() and _load() ---

    def _ring(self, key: str) -> _Ring:
        ring = self.rings.get(key)
        if ring is None:
            ring = self.rings[key] = _Ring(key)
        return ring

    def _pair(self, key: str, entry: ActivityEntry) -> None:
        if entry.request_id is None:
            return
        pair_key = (key, entry.request_id)
        if entry.type == "command_start":
            self._starts[pair_key] = entry
            self._starts.move_to_end(pair_key)
            while len(self._starts) > _MAX_PENDING_STARTS:
                self._starts.popitem(last=False)
        elif entry.type == "command_end":
            start = self._starts.pop(pair_key, None)
            if start is not None:
                entry.start_id = start.id
                if entry.duration_ms is None:
                    entry.duration_ms = _ms_between(start.ts, entry.ts)

    def _remember(self, ring: _Ring, entry: ActivityEntry) -> None:
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

    def _line(self, entry: ActivityEntry, n: int, directory: str | None) -> str:
        record: dict[str, Any] = entry.model_dump(mode="json", exclude={"id", "start_id"})
        record["n"] = n
        if entry.start_id is not None:
            record["start_seq"] = int(entry.start_id.rpartition(".")[2])
        if directory is not None:
            record["dir"] = directory
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"))

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.jsonl"

    def _append_line(self, ring: _Ring, line: str) -> None:
        if ring.file_lines >= 2 * self.ring_size:
            self._compact(ring)
        fd = self._fds.get(ring.key)
        if fd is None:
            private_dir(self.root)
            fd = open_private(self._path(ring.key), os.O_WRONLY | os.O_APPEND)
            self._fds[ring.key] = fd
        os.write(fd, (line + "\n").encode("utf-8"))
        ring.file_lines += 1

    def _compact(self, ring: _Ring) -> None:
        """Rewrite the file as just the ring (atomically), so it stays at most 2x the ring."""
        self._write_meta()  # the seq high-water mark must survive the lines going away
        path = self._path(ring.key)
        tmp = path.with_suffix(".tmp")
        # The seqs of evicted entries go first, so a gap is still counted exactly after a restart.
        lines = [json.dumps({"evicted": list(ring.evicted)}, separators=(",", ":"))]
        lines += [
            self._line(e, ring.first_n + i, self.directories.get(ring.key) if i == 0 else None)
            for i, e in enumerate(ring.entries)
        ]
        fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
        os.replace(tmp, path)
        old = self._fds.pop(ring.key, None)
        if old is not None:
            os.close(old)
        ring.file_lines = len(lines)

    def _write_meta(self) -> None:
        private_dir(self.root)
        meta = {"format": FORMAT, "epoch": self.epoch, "seq": self.seq}
        write_private(self.root / META_FILE, json.dumps(meta))

    def _load(self) -> None:
        meta: dict[str, Any] = {}
        try:
            meta = json.loads((self.root / META_FILE).read_text())
        except (OSError, ValueError):
            meta = {}
        epoch = meta.get("epoch") if isinstance(meta, dict) else None
        high_water = meta.get("seq", 0) if isinstance(meta, dict) else 0
        # Without the meta file the old epoch is unknown: a new one makes old cursors `gap`.
        self.epoch = epoch if isinstance(epoch, str) and epoch else secrets.token_hex(4)
        records: list[tuple[int, str, dict[str, Any]]] = []
        if self.root.is_dir():
            for path in sorted(self.root.glob("*.jsonl")):
                found, evicted = _read_records(path)
                records += [(int(record["seq"]), path.stem, record) for record in found]
                ring = self._ring(path.stem)
                ring.file_lines = len(found) + (1 if evicted else 0)
                ring.evicted.extend(evicted)
        records.sort(key=lambda r: r[0])
        for seq, key, record in records:
            self._restore(key, seq, record)
        self.seq = max([self.seq, *([high_water] if isinstance(high_water, int) else [])])
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
        if entry.request_id is not None:
            pair_key = (key, entry.request_id)
            if entry.type == "command_start":
                self._starts[pair_key] = entry
            elif entry.type == "command_end":
                self._starts.pop(pair_key, None)
        self.seq = max(self.seq, seq)
        self._remember(ring, entry)


def _page_key(url: str) -> str:
    return url.split("#", 1)[0]


def _read_records(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Every valid entry line, and the evicted seqs a compaction recorded.

    A torn last line (crash mid-write) is cut off, as journal.py does.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        logger.warning("cannot read activity log %s: %s", path, exc)
        return [], []
    lines = data.split(b"\n")
    if lines[-1]:
        with path.open("r+b") as fh:
            fh.truncate(len(data) - len(lines[-1]))
    out: list[dict[str, Any]] = []
    evicted: list[int] = []
    for raw in lines[:-1]:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("seq"), int):
            out.append(record)
        elif isinstance(record, dict) and isinstance(record.get("evicted"), list):
            evicted = [s for s in record["evicted"] if isinstance(s, int)]
    return out, evicted

