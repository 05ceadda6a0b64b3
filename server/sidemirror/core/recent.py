"""A parser's memory of ids it has seen, kept for the latest ones only.

A parser that follows a live session for hours remembers ids (calls whose result is still to
come, results already shown) so a later record finds or skips them. Such records come soon
after the one they answer; keeping every id forever would grow by a row a call for as long as
the session runs. These keep the `limit` ids put last: the first put is the first dropped.
"""

from __future__ import annotations

from typing import TypeVar

# Tool calls a parser remembers (names, results given) in a session followed for hours: a call's
# result, or a line repeating it, comes long before a thousand other calls were made.
CALLS_REMEMBERED = 1024

K = TypeVar("K")
V = TypeVar("V")


class RecentDict(dict[K, V]):
    """A dict holding at most `limit` keys; a new key past that drops the oldest put. Only
    `d[key] = value` adds keys (not `update` or `setdefault`)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self and len(self) >= self.limit:
            del self[next(iter(self))]
        super().__setitem__(key, value)


class RecentSet:
    """A set holding at most `limit` keys; a new key past that drops the oldest added."""

    def __init__(self, limit: int) -> None:
        self._keys: RecentDict[str, None] = RecentDict(limit)

    def add(self, key: str) -> None:
        self._keys[key] = None

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)
