"""One workspace's ring of newest activity entries, and what it can say about those it dropped."""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

from sidemirror.core.models import ActivityEntry

EVICTED_MEMORY = 4_000  # seqs of evicted entries kept to count a gap exactly (4 rings' worth)


@dataclass(eq=False)
class Ring:
    """One workspace's newest entries; `first_n` is the workspace ordinal of `entries[0]`."""

    key: str
    entries: deque[ActivityEntry] = field(default_factory=deque)
    first_n: int = 1
    evicted: deque[int] = field(default_factory=lambda: deque(maxlen=EVICTED_MEMORY))

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
