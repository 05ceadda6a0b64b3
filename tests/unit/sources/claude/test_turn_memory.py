"""What an open turn keeps per message to count its tokens stays bounded, and counts the same.

A turn can stay open for hours (an agent left working; issue 34's fleet writes 400 lines/s into
turns that never close). The turn tracker kept every message's usage under its ids until the turn
closed: about 300 bytes a message, never freed while the turn ran. Measured here with
tracemalloc over 20,000 messages shaped like Claude Code's (fresh ids each, each message's usage
repeated by a second, larger line as its output grows), after the lines themselves are gone.
"""

from __future__ import annotations

import tracemalloc
import uuid

import pytest
from sidemirror.sources.claude.turns import TurnTracker, Usage

MESSAGES = 20_000
MODEL = "claude-sonnet-4-5-20250929"
# Kept per message once the turn is long: nothing but what a few recent messages hold.
MAX_BYTES_PER_MESSAGE = 4


def _ids(i: int) -> tuple[str, str]:
    return f"msg_{uuid.uuid4().hex[:24]}", f"req_{i:024d}"


def _feed(tracker: TurnTracker, count: int) -> None:
    for i in range(count):
        message, request = _ids(i)
        sub = f"toolu_{i % 3}" if i % 5 == 0 else None
        # A message's first line, then its last one with the output grown: the larger counts.
        tracker.add_usage(message, request, MODEL, Usage(input=3, output=1, cache_read=10), sub)
        tracker.add_usage(message, request, MODEL, Usage(input=3, output=7, cache_read=10), sub)


def test_an_open_turn_keeps_no_row_per_message() -> None:
    tracker = TurnTracker()
    tracker.open("2026-01-01T00:00:00Z")
    _feed(tracker, 100)  # the first rows of the turn's dicts are made before measuring
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        _feed(tracker, MESSAGES)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown / MESSAGES <= MAX_BYTES_PER_MESSAGE, f"{grown / MESSAGES:.0f} bytes a message"


def test_a_long_turn_counts_each_message_once_at_its_largest() -> None:
    tracker = TurnTracker()
    tracker.open("2026-01-01T00:00:00Z")
    _feed(tracker, MESSAGES)
    closed = tracker.close("ok", 1000)
    assert closed is not None
    assert (closed.input_tokens, closed.output_tokens) == (3 * MESSAGES, 7 * MESSAGES)
    assert closed.cache_read_tokens == 10 * MESSAGES
    assert closed.subagent_tokens == 20 * (MESSAGES // 5)
    assert closed.cost_usd is not None and closed.subagent_cost_usd is not None
    assert closed.subagent_cost_usd * 5 == pytest.approx(closed.cost_usd)
