"""A session's items: the newest in memory, older ones spilled to a file, so memory stays flat.

A long or busy session (100 MB transcripts, 2,000 ingested events a second for minutes) would
otherwise keep every item, whole, in memory. Clients almost always read the newest items
(snapshots, live), so only a window of them stays as objects, with their projected JSON; older
items are written once, whole, to a spill file and read back by position for a resume from an
old id or "show more". The spill file is a cache: rebuilt from the sources on every start.

A fleet of busy sessions would each fill its window: the items held by every log that can spill
are counted in one budget (`core/held_items.py`), which trims the logs holding the most.

A fleet of busy sessions would also each keep its spill file open: the files' descriptors are
held in one LRU (`SPILL_FILES`, at most `SPILL_OPEN_MAX`), and a log whose file was closed
reopens it when it next spills or reads, so the server's descriptors stay bounded however many
sessions spill.

A full disk never changes what an index reads. A writer that must refuse what the disk cannot
take (the ingest journal) first calls `reserve`, which allocates the spill room the items will
need or raises OSError with nothing changed. A spill write that fails anyway (no reservation: a
followed transcript) keeps the item in memory, past the window, until a later spill succeeds:
an item is dropped from memory only once it is whole in the file.
"""

from __future__ import annotations

import errno
import logging
import os
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sidemirror.core.durable import OpenFiles, WriteFailed, pwrite_all
from sidemirror.core.held_items import HELD_ITEMS, HeldItems
from sidemirror.core.models import SESSION_ITEM_ADAPTER, SessionItem
from sidemirror.core.private import private_dir

logger = logging.getLogger(__name__)
DEFAULT_WINDOW = 2048
ALLOCATE_STEP = 64 << 10  # spill room is reserved in steps this big (or exactly, if that fails)
# Room for what `append` adds to an item not yet stored (its id, a seq), over its JSON length.
ITEM_SLACK = 128
SPILL_OPEN_MAX = 64
# Every log's spill descriptor, shared: the event loop is the only user of item logs.
SPILL_FILES = OpenFiles(SPILL_OPEN_MAX, flags=os.O_RDWR)


class ItemLog:
    """Positional access to every item of one session log, and lookup by seq.

    Seqs only ever increase, but need not be dense: a transcript's items are numbered from
    their byte positions (see sources/claude/positions.py), so an index is not a seq.
    """

    def __init__(
        self,
        spill_path: Path | None = None,
        window: int = DEFAULT_WINDOW,
        files: OpenFiles = SPILL_FILES,
        budget: HeldItems = HELD_ITEMS,
    ) -> None:
        self.spill_path = spill_path
        self.window = window
        self._files = files
        # Only a log that can spill is counted: the budget could never trim one that cannot.
        self._budget = budget if spill_path is not None else None
        self._recent: deque[SessionItem] = deque()
        self._wire: deque[str | None] = deque()  # projected JSON of the recent items, lazily
        self._base = 0  # index of _recent[0]
        self._offsets = array("Q")  # spill-file offset of items [0, _base)
        # Seq of every item, in order (8 bytes an item, spilled ones too); None while every seq
        # is its index + 1, as in ingested logs, which then pay nothing for it.
        self._seqs: array[int] | None = None
        self._opened = False  # the spill file was made (emptied) by this log: reopen, never empty
        self._end = 0  # bytes of whole spilled lines; the file may be longer (reserved room)
        self._allocated = 0  # bytes of the file allocated by `reserve`
        self._lines: dict[int, bytes] = {}  # spill lines made by `reserve`, by item index
        self._spill_failed = False  # the last spill write failed (logged once until one works)

    def __len__(self) -> int:
        return self._base + len(self._recent)

    def __bool__(self) -> bool:
        return len(self) > 0

    @property
    def held(self) -> int:
        """How many items are in memory (the rest are in the spill file)."""
        return len(self._recent)

    def __getitem__(self, index: int) -> SessionItem:
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"item index {index} out of range (0..{n - 1})")
        if index >= self._base:
            return self._recent[index - self._base]
        return self._read_spilled(index)

    def __iter__(self) -> Iterator[SessionItem]:
        for index in range(len(self)):
            yield self[index]

    @property
    def last_seq(self) -> int:
        if self._seqs is None:
            return len(self)
        return self._seqs[-1] if self._seqs else 0

    def seq_at(self, index: int) -> int:
        return index + 1 if self._seqs is None else self._seqs[index]

    def index_of(self, seq: int) -> int | None:
        """The index of the item numbered `seq`, or None when no item has it."""
        if self._seqs is None:
            return seq - 1 if 1 <= seq <= len(self) else None
        index = bisect_left(self._seqs, seq)
        return index if index < len(self._seqs) and self._seqs[index] == seq else None

    def count_before(self, seq: int) -> int:
        """How many items have a seq below `seq` (the index where an item numbered `seq` is or
        would be)."""
        if self._seqs is None:
            return min(max(seq - 1, 0), len(self))
        return bisect_left(self._seqs, seq)

    def newest(self, count: int) -> list[SessionItem]:
        """The last `count` items, oldest first (mostly from memory)."""
        start = max(0, len(self) - count)
        return [self[i] for i in range(start, len(self))]

    def append(self, item: SessionItem) -> None:
        count = len(self)
        if item.seq <= self.last_seq:
            raise ValueError(f"seq {item.seq} after {self.last_seq}: seqs must increase")
        if self._seqs is None and item.seq != count + 1:
            self._seqs = array("Q", range(1, count + 1))
        if self._seqs is not None:
            self._seqs.append(item.seq)
        self._recent.append(item)
        self._wire.append(None)
        # More than one when earlier spills failed (a full disk) and the disk has room again.
        if self.spill_path is not None and len(self._recent) > self.window:
            self.spill_oldest(len(self._recent) - self.window)
        # After the window: one session alone (within its window) is never trimmed below it.
        if self._budget is not None:
            self._budget.added(self)

    def clear(self) -> None:
        self._release_all()
        self._recent.clear()
        self._wire.clear()
        self._base = 0
        self._offsets = array("Q")
        self._seqs = None
        self._lines.clear()
        if self._opened:
            os.ftruncate(self._open_spill(), 0)
        self._end = self._allocated = 0

    def wire_json(self, index: int, project: Callable[[SessionItem], str]) -> str:
        """Item `index` projected for the wire; cached for items still in memory."""
        if index < self._base:
            return project(self._read_spilled(index))
        slot = index - self._base
        cached = self._wire[slot]
        if cached is None:
            cached = project(self._recent[slot])
            self._wire[slot] = cached
        return cached

    def item_and_wire(
        self, index: int, project: Callable[[SessionItem], str]
    ) -> tuple[SessionItem, str]:
        """Item `index` with its wire JSON (one read of the spill file for an old item)."""
        if index < self._base:
            item = self._read_spilled(index)
            return item, project(item)
        return self._recent[index - self._base], self.wire_json(index, project)

    def close(self) -> None:
        self._release_all()
        self._budget = None  # a closed log is counted no more
        if self._opened and self.spill_path is not None:
            self._files.forget(self.spill_path)

    def _release_all(self) -> None:
        if self._budget is not None:
            self._budget.released(len(self._recent))

    # --- the spill file ---

    def reserve(self, items: Sequence[SessionItem]) -> None:
        """Allocate the spill room that appending `items` will need, or raise OSError (a full
        disk) with nothing changed, so a caller can refuse them before it commits to them."""
        spills = len(self._recent) + len(items) - self.window
        if self.spill_path is None or spills <= 0:
            return
        need = 0
        for slot in range(min(spills, len(self._recent))):  # known items: their exact lines
            index = self._base + slot
            line = self._lines.get(index)
            if line is None:
                line = self._lines[index] = _spill_line(self._recent[slot])
            need += len(line)
        # Items not stored yet get their id and seq on append: their JSON plus some slack.
        for item in items[: max(0, spills - len(self._recent))]:
            need += len(item.model_dump_json()) + ITEM_SLACK
        self._allocate(self._end + need)

    def _allocate(self, size: int) -> None:
        # macOS has no posix_fallocate: nothing is reserved there, and a spill the disk
        # refuses still loses nothing (the item stays in memory).
        fallocate = getattr(os, "posix_fallocate", None)
        if size <= self._allocated or fallocate is None:
            return
        fd = self._open_spill()
        step = -(-size // ALLOCATE_STEP) * ALLOCATE_STEP
        for target in (step, size):  # a nearly full disk may still have the exact room
            try:
                fallocate(fd, self._allocated, target - self._allocated)
            except OSError as exc:
                if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL):
                    return  # cannot reserve here: a failed spill still loses nothing
                if target == size:
                    raise
                continue
            self._allocated = target
            return

    def _open_spill(self) -> int:
        """The spill file's descriptor, from the shared LRU (reopened if it was closed). The
        first open empties what an earlier run left: the file is this run's cache."""
        assert self.spill_path is not None
        if not self._opened:
            private_dir(self.spill_path.parent)
        fd, created = self._files.fd(self.spill_path)
        if not self._opened:
            if not created:
                os.ftruncate(fd, 0)
            self._opened = True
        return fd

    def spill_oldest(self, count: int = 1) -> int:
        """Move the oldest `count` items held in memory (fewer if fewer are held) to the spill
        file, in one write; how many moved: 0 if the disk refused (they stay in memory, nothing
        lost). A budget trim spills several at a time: one write each cost a syscall and a
        descriptor lookup per item, and in a fleet every item is spilled."""
        count = min(count, len(self._recent))
        if count <= 0:
            return 0
        lines = [
            self._lines.pop(self._base + slot, b"") or _spill_line(self._recent[slot])
            for slot in range(count)
        ]
        try:
            pwrite_all(self._open_spill(), b"".join(lines), self._end)
        except (OSError, WriteFailed) as exc:
            # Kept in memory (past the window) rather than lost: the next append tries again.
            if not self._spill_failed:
                logger.warning("cannot spill to %s: %s (kept in memory)", self.spill_path, exc)
            self._spill_failed = True
            return 0
        self._spill_failed = False
        for line in lines:
            self._recent.popleft()
            self._wire.popleft()
            self._offsets.append(self._end)
            self._end += len(line)
        self._base += count
        if self._budget is not None:
            self._budget.released(count)
        return count

    def _read_spilled(self, index: int) -> SessionItem:
        start = self._offsets[index]
        stop = self._offsets[index + 1] if index + 1 < self._base else self._end
        raw = os.pread(self._open_spill(), stop - start, start)
        return SESSION_ITEM_ADAPTER.validate_json(raw)


def _spill_line(item: SessionItem) -> bytes:
    return item.model_dump_json().encode("utf-8") + b"\n"
