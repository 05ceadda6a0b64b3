"""The agent's own figures for a session, as Claude Code gives them to its status line command:
context window use, session cost and the plan's rate-limit windows (`sidemirror statusline`
reports them; docs/api.md, `POST /api/statusline/claude`).

These are exact where the transcript only lets us estimate: the context window's size and use
come from the model the agent runs, the cost is the agent's own sum, and the rate limits are not
in any file. Only the latest report of each session is kept, in memory (they are live figures;
a restart waits for the next report, at the agent's next message).

Fields, per Claude Code's status line documentation: `context_window.current_usage` (input,
cache-write and cache-read tokens of the last request: what the model saw; null before the first
request and after /compact), `context_window.context_window_size`, `context_window.used_percentage`
(null early in a session; since 2.1.6), `cost.total_cost_usd` (since 1.0.85), `rate_limits.
five_hour|seven_day.used_percentage|resets_at` (Claude.ai plans, after the first answer; 2.1.80+).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

MAX_SESSIONS = 1000  # reports kept; the oldest reported is dropped first
WINDOWS = ("five_hour", "seven_day")
_USAGE_INPUT = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _count(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _text(value: object, cap: int = 200) -> str | None:
    return value[:cap] if isinstance(value, str) and value else None


def _get(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _context(payload: dict[str, Any]) -> dict[str, Any] | None:
    usage = _get(payload, "context_window", "current_usage")
    used: int | None = None
    if isinstance(usage, dict):
        counts = [_count(usage.get(key)) for key in _USAGE_INPUT]
        used = (
            sum(c for c in counts if c is not None) if any(c is not None for c in counts) else None
        )
    window = _count(_get(payload, "context_window", "context_window_size"))
    percent = _number(_get(payload, "context_window", "used_percentage"))
    if used is None and window is None and percent is None:
        return None
    if percent is None and used is not None and window:
        percent = round(100 * used / window, 1)
    return {"used_tokens": used, "window_tokens": window, "used_percentage": percent}


def _limits(payload: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name in WINDOWS:
        window = _get(payload, "rate_limits", name)
        used = _number(_get(window, "used_percentage"))
        if used is not None:
            out[name] = {"used_percentage": used, "resets_at": _count(_get(window, "resets_at"))}
    return out


def figures_from_statusline(payload: object) -> dict[str, Any]:
    """The figures of a status line payload; ValueError when it names no session."""
    if not isinstance(payload, dict):
        raise ValueError("a status line report is a JSON object")
    session = _text(payload.get("session_id"))
    if session is None:
        raise ValueError("the status line report has no 'session_id'")
    return {
        "session": session,
        "agent": "claude",
        "source": "statusline",
        "reported_at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "model": _text(_get(payload, "model", "id")),
        "version": _text(payload.get("version"), 40),
        "context": _context(payload),
        "cost_usd": _number(_get(payload, "cost", "total_cost_usd")),
        "rate_limits": _limits(payload),
    }


class AgentFigures:
    """The latest figures of each session (the most recently reported `MAX_SESSIONS`)."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._latest: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._max = max_sessions
        self.reports = 0
        self.last_report_at = 0.0

    def put(self, figures: dict[str, Any]) -> None:
        session = figures["session"]
        self._latest.pop(session, None)
        self._latest[session] = figures
        while len(self._latest) > self._max:
            self._latest.popitem(last=False)
        self.reports += 1
        self.last_report_at = time.monotonic()

    def get(self, session: str) -> dict[str, Any] | None:
        return self._latest.get(session)
