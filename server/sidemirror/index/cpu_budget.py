"""How long a background job should rest to keep the whole process within a CPU budget.

The search build is two threads (a parse holding the interpreter, a writer mostly in SQLite
outside it) that together can go past one core; the writer is the one that paces the pipeline
(its feeder waits on its queue), so it is the one that rests.
"""

from __future__ import annotations

import time


class CpuBudget:
    """`rest()`: seconds to rest now so that the process's CPU over the current window stays
    within `cores` (0 until the window is `window_s` long; a new window starts after each rest)."""

    def __init__(self, cores: float, window_s: float = 0.25) -> None:
        self.cores = cores
        self.window_s = window_s
        self._start = (time.monotonic(), time.process_time())

    def rest(self) -> float:
        wall = time.monotonic() - self._start[0]
        if wall < self.window_s:
            return 0.0
        cpu = time.process_time() - self._start[1]
        self.restart()
        return max(0.0, cpu / self.cores - wall)

    def restart(self) -> None:
        """A new window (after an idle spell, which would otherwise count as headroom)."""
        self._start = (time.monotonic(), time.process_time())
