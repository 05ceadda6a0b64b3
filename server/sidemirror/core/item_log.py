"""A session's items: the newest in memory, older ones spilled to a file, so memory stays flat.

A long or busy session (100 MB transcripts, 2,000 ingested events a second for minutes) would
otherwise keep every item, whole, in memory. Clients almost always read the newest items
(snapshots, live), so only a window of them stays as objects, with their projected JSON; older
items are written once, whole, to a spill file and read back by position for a resume from an
old id or "show more". The spill file is a cache: rebuilt from the sources on every start.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from sidemirror.core.models import SESSION_ITEM_ADAPTER, SessionItem
from sidemirror.core.private import open_private, private_dir

DEFAULT_WINDOW = 2048


class ItemLog:
    """Positional access to every item of one session log, and lookup by seq.

    Seqs only ever increase, but need not be dense: a transcript's items are numbered from
    their byte positions (see sources/claude/positions.py), so an index is not a seq.
    """

    def __init__(self, spill_path: Path | None = None, window: int = DEFAULT_WINDOW) -> None:
        self.spill_path = spill_path
        self.window = window
        self._recent: deque[SessionItem] = deque()
        self._wire: deque[str | None] = deque()  # projected JSON of the recent items, lazily
        self._base = 0  # index of _recent[0]
        self._offsets = array("Q")  # spill-file offset of items [0, _base)
        # Seq of every item, in order (8 bytes an item, spilled ones too); None while every seq
        # is its index + 1, as in ingested logs, which then pay nothing for it.
        self._seqs: array[int] | None = None
        self._fd: int | None = None
        self._end = 0  # spill-file size

    def __len__(self) -> int:
        return self._base + len(self._recent)

    def __bool__(self) -> bool:
        return len(self) > 0

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
        if self.spill_path is not None and len(self._recent) > self.window:
            self._spill_oldest()

    def clear(self) -> None:
        self._recent.clear()
        self._wire.clear()
        self._base = 0
        self._offsets = array("Q")
        self._seqs = None
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
        self._end = 0

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
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # --- the spill file ---

    def _spill_oldest(self) -> None:
        item = self._recent.popleft()
        self._wire.popleft()
        line = item.model_dump_json().encode("utf-8") + b"\n"
        if self._fd is None:
            assert self.spill_path is not None
            private_dir(self.spill_path.parent)
            self._fd = open_private(self.spill_path, os.O_RDWR | os.O_TRUNC)
        os.pwrite(self._fd, line, self._end)
        self._offsets.append(self._end)
        self._end += len(line)
        self._base += 1

    def _read_spilled(self, index: int) -> SessionItem:
        assert self._fd is not None
        start = self._offsets[index]
        stop = self._offsets[index + 1] if index + 1 < self._base else self._end
        raw = os.pread(self._fd, stop - start, start)
        return SESSION_ITEM_ADAPTER.validate_json(raw)
