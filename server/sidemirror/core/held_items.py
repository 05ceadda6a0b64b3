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

A trim walks the logs, so it starts at most once per quarter of the limit's appends, even when
the floors alone keep the total above the limit (more busy sessions than `limit / floor`): the
cost per appended item does not grow with the number of sessions. Its spilling is spread over
the appends that follow, `SPILL_STEP` items each, not done at once: a quarter of the limit
written in one go held the event loop for milliseconds, in the middle of every stream's latency
(issue 34: one stream's p99 went from 6 to 17 ms when the limit halved and trims came twice as
often). The total keeps falling meanwhile (each append adds one and spills several).
"""

from __future__ import annotations

import weakref
from typing import Protocol

DEFAULT_LIMIT = 1024
DEFAULT_FLOOR = 32
SPILL_STEP = 4  # items spilled per append while a trim runs


class Spiller(Protocol):
    """A log that can give up its oldest held item (`ItemLog`)."""

    @property
    def held(self) -> int: ...

    def spill_oldest(self, count: int = 1) -> int: ...


class HeldItems:
    """Counts the items held in memory by every log that can spill, and trims the largest."""

    def __init__(self, limit: int = DEFAULT_LIMIT, floor: int = DEFAULT_FLOOR) -> None:
        self.limit = limit
        self.floor = floor
        self.total = 0
        self._trim_at = limit
        self._logs: weakref.WeakSet[Spiller] = weakref.WeakSet()
        # The trim under way: the logs to spill from, the largest last (popped first). Weak, as
        # `_logs`: a trim left unfinished when the appends stop must not keep closed logs alive.
        self._spilling: list[weakref.ref[Spiller]] = []

    def added(self, log: Spiller, count: int = 1) -> None:
        self.total += count
        self._logs.add(log)
        if not self._spilling and self.total > self._trim_at:
            self._trim()
        if self._spilling:
            self._spill(SPILL_STEP * count)

    def released(self, count: int = 1) -> None:
        self.total -= count

    def _trim(self) -> None:
        """Start a trim: the logs holding the most give up items first."""
        by_held = sorted(self._logs, key=lambda held_by: held_by.held)
        self._spilling = [weakref.ref(log) for log in by_held]

    def _spill(self, budget: int) -> None:
        target = self.limit * 3 // 4
        while budget and self._spilling and self.total > target:
            log = self._spilling[-1]()
            room = 0 if log is None else min(budget, log.held - self.floor, self.total - target)
            spilled = log.spill_oldest(room) if log is not None and room > 0 else 0
            if not spilled:
                self._spilling.pop()  # gone, at its floor, or the disk refused (kept): next
            else:
                budget -= spilled
        if self._spilling and self.total > target:
            return
        self._spilling = []
        # Floors may keep the total above the limit: trim again after a quarter limit more.
        self._trim_at = max(self.limit, self.total + self.limit // 4)


# Every item log's budget: the event loop is the only user of item logs.
HELD_ITEMS = HeldItems()
