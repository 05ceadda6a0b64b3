"""A Claude Code session's item seqs, from byte positions in its transcript.

Ids are positions in append-only logs. Counting items from the start of the file would make the
id of the newest item of a 1 GB transcript depend on parsing the whole gigabyte; a byte position
does not. Each line of the session's own file owns the seqs `end * SLOTS + 1 … end * SLOTS +
SLOTS`, where `end` is the offset just past it: its items take the first of them, and sub-agent
items merged after it (session.py) the next. Seqs therefore increase along the merged log,
and a parse that starts at any line (sync.py) numbers the items from there on exactly as
a parse from byte 0 does.

SLOTS bounds how many items may follow one main-file line before the next: sub-agents write to
their own files while the main file waits for their Task's result. Past that many, the store
numbers the extras after the last seq (Store.append), which stays ordered and unique; only then
would a later parse starting after that line give different numbers. 2**16 items after one line
and files up to 2**37 bytes (128 GiB) keep seqs below 2**53, exact as JavaScript numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from sidemirror.core.models import SessionItem

MAIN = ""  # origin of records from the session's own file (agent files pass their agent id)
SLOTS = 1 << 16


def last_seq_of_line(end: int) -> int:
    """The highest seq the items of the main-file line ending at `end` (and the sub-agent items
    merged after it) can take."""
    return end * SLOTS + SLOTS - 1


class Positions:
    """Numbers items as the merge feeds them: resets at each main-file line."""

    def __init__(self) -> None:
        self._base = 0  # end offset of the last main-file line, times SLOTS
        self._next = 1

    def number(self, key: str, end: int, items: Iterable[SessionItem]) -> None:
        if key == MAIN:
            self._base = end * SLOTS
            self._next = 1
        for item in items:
            item.seq = self._base + self._next
            self._next += 1
