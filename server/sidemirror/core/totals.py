"""A session's totals (turns, tokens by kind, cost), as `GET /workspace/{ws}/sessions` lists them.

They are the sum of the session's `turn_complete` items, kept as the items pass where they are
already read, never by parsing a transcript for a listing (ten thousand sessions are listed):

- the store counts each item it stores (`Store._store`): a log held from its first item is
  counted from zero; a reset (a rewritten file) forgets the totals;
- the search index's backfill reads every item of a session nobody opened, and the skipped
  part of a huge one (index/search_feed.py): it sets the totals whole, and keeps them with its
  mark, so a restart does not read the session again to know them.

`through` is the highest seq counted: totals cover every `turn_complete` up to it, so an item
at or below it (a session loaded after a scan publishes its items again) is not counted twice,
and one above it (a log is append-only) is added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sidemirror.core.models import SessionItem, TurnCompleteEvent

COST_DIGITS = 6  # a sum of floats: 0.1 + 0.2 is listed as 0.3, not 0.30000000000000004


@dataclass(slots=True)
class SessionTotals:
    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost_usd: float | None = None  # None while no turn counted has a price
    through: int = 0

    def add(self, item: SessionItem) -> None:
        """Count `item` if it is a turn's end above `through` (other items are skipped)."""
        if not isinstance(item, TurnCompleteEvent) or item.seq <= self.through:
            return
        self.through = item.seq
        self.turns += 1
        # A turn's own fields already include its sub-agents' part (models.py).
        self.input += item.input_tokens
        self.output += item.output_tokens
        self.cache_read += item.cache_read_tokens
        self.cache_write += item.cache_write_tokens
        if item.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + item.cost_usd

    def add_read(self, items: list[SessionItem]) -> None:
        """Count a batch of a whole read of the session (seqs ascending within it): a huge
        transcript's skipped part is read after its tail, so a batch may lie below `through`."""
        top, self.through = self.through, 0
        for item in items:
            self.add(item)
        self.through = max(top, items[-1].seq if items else 0)

    def tokens(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }

    def listed(self) -> dict[str, Any]:
        """The fields a sessions listing gives."""
        cost = None if self.cost_usd is None else round(self.cost_usd, COST_DIGITS)
        return {"turns": self.turns, "cost_usd": cost, "tokens": self.tokens()}

    def saved(self) -> str:
        """Compact JSON to keep with the search index's mark (`restored` reads it)."""
        return json.dumps(
            [
                self.turns,
                self.input,
                self.output,
                self.cache_read,
                self.cache_write,
                self.cost_usd,
                self.through,
            ]
        )


def restored(text: str | None) -> SessionTotals | None:
    """Totals from `SessionTotals.saved`'s JSON; None for anything else (a row of another
    shape, none kept)."""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(value, list) or len(value) != 7:
        return None
    *counts, cost, through = value
    numbers = [*counts, through]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return None
    if cost is not None and not isinstance(cost, int | float):
        return None
    turns, inp, out, cache_read, cache_write = counts
    return SessionTotals(
        turns, inp, out, cache_read, cache_write, None if cost is None else float(cost), through
    )


# What a listing gives for a session whose totals are not known yet (not read since it was
# found, the search index still filling): null, never zeros that would read as "nothing".
UNKNOWN: dict[str, Any] = {"turns": None, "cost_usd": None, "tokens": None}
