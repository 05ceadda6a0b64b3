"""How long a client waits before it tries the server again: doubling from `first` up to `cap`,
each wait drawn from its upper half, so that forwarders cut by the same server restart do not all
knock at the same instant, and none waits longer than `cap`."""

from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    def __init__(self, first: float, cap: float, rand: Callable[[], float] = random.random) -> None:
        self.first = first
        self.cap = cap
        self._rand = rand
        self._next = first

    def reset(self) -> None:
        """The link worked: the next drop is retried quickly again."""
        self._next = self.first

    def wait(self) -> float:
        """The next wait, in seconds: in [n/2, n] for n = first, 2·first, … up to cap."""
        span = self._next
        self._next = min(self._next * 2, self.cap)
        return span / 2 + span / 2 * self._rand()
