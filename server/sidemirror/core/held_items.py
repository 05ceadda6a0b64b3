"""One memory budget for the items that every session log holds, shared by all of them.

Each log keeps its newest items as objects, with their wire JSON (`core/item_log.py`), up to its
window of 2,048. One busy session stays within that; a fleet does not: twenty sessions written
at 20 lines a second each fill their windows together, and 20 × 2,048 items (about 4 KB each)
is ~160 MB that keeps growing for minutes. So the sum is bounded too: past `limit` items in all,
the logs holding the most spill their oldest until the total is back under three quarters of
the limit, none below `floor` (the newest few, for a client's resume; a new client's snapshot
of 200 comes partly from the spill file, as history does). The floor was 128, about a
snapshot's worth: twenty busy sessions then held 2,560 items at least, ~10 MB, more than the
limit itself, and every session a fleet starts loading took ~500 KB at once (issue 34). The limit
was 2,048: when a fleet of 20 sessions wakes, the held items added ~9.5 MB of RSS, against
~5.5 MB at 1,024, and issue 34's target is growth of at most 10 MB over a 5-minute run (10.3 MB
measured with 2,048). So a lone busy session now spills past 1,024 items held (down to 768),
long before its own window: that window bounds a log only when the budget's spills fail (a full
disk; those spills reserve no room, the items they could not write stay held).

A trim walks the logs, so it runs at most once per quarter of the limit's appends, even when the
floors alone keep the total above the limit (more busy sessions than `limit / floor`): the cost
per appended item does not grow with the number of sessions.
"""

from __future__ import annotations

import weakref
from typing import Protocol

DEFAULT_LIMIT = 1024
DEFAULT_FLOOR = 32


class Spiller(Protocol):
    """A log that can give up its oldest held item (`ItemLog`)."""

    @property
    def held(self) -> int: ...

    def spill_oldest(self) -> bool: ...


class HeldItems:
    """Counts the items held in memory by every log that can spill, and trims the largest."""

    def __init__(self, limit: int = DEFAULT_LIMIT, floor: int = DEFAULT_FLOOR) -> None:
        self.limit = limit
        self.floor = floor
        self.total = 0
        self._trim_at = limit
        self._logs: weakref.WeakSet[Spiller] = weakref.WeakSet()

    def added(self, log: Spiller, count: int = 1) -> None:
        self.total += count
        self._logs.add(log)
        if self.total > self._trim_at:
            self._trim()

    def released(self, count: int = 1) -> None:
        self.total -= count

    def _trim(self) -> None:
        target = self.limit * 3 // 4
        for log in sorted(self._logs, key=lambda held_by: held_by.held, reverse=True):
            while self.total > target and log.held > self.floor:
                if not log.spill_oldest():  # the disk refused: kept in memory, try the next
                    break
            if self.total <= target:
                break
        # Floors may keep the total above the limit: trim again after a quarter limit more.
        self._trim_at = max(self.limit, self.total + self.limit // 4)


# Every item log's budget: the event loop is the only user of item logs.
HELD_ITEMS = HeldItems()
