"""Timestamps as the protocol writes them: ISO 8601 in UTC, millisecond precision, `Z`.

Every source, the activity log and the clients stamp and compare times through these, so a
timestamp written by one part reads the same in every other.
"""

from __future__ import annotations

from datetime import UTC, datetime


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_from_epoch(ts: float) -> str | None:
    """A Unix time as ISO text; None for "never" (0 or less)."""
    if ts <= 0:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


def parse_ts(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def ms_between(start: str | None, end: str | None) -> int | None:
    """Milliseconds from `start` to `end` (never negative); None when either is missing or
    unreadable, or one is naive and the other aware (they cannot be compared)."""
    a, b = parse_ts(start), parse_ts(end)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    return max(0, round((b - a).total_seconds() * 1000))
