"""What a followed Claude Code session remembers per tool call stays bounded, and results still
name their call.

A live transcript is followed for hours and an agent makes thousands of tool calls. The parser
kept every call's name and time under its id for the whole session, to name the result that
follows it and to skip a call a re-flushed line repeats. Measured here with tracemalloc over
5,000 calls, each an assistant line with the call and a user line with its result, as Claude
Code writes them. What stays per call is the rewind row of each of its two lines (31 bytes a
main-thread line, sources/claude/branches.py), not the call.
"""

from __future__ import annotations

import tracemalloc
import uuid
from typing import Any

from sidemirror.core.models import ToolResultEvent, ToolUseEvent
from sidemirror.sources.claude.parser import ClaudeParser

CALLS = 5_000
MAX_BYTES_PER_CALL = 96  # two rewind rows (2 x 31) and room for the allocator's rounding


def _lines(n: int, parent: str) -> tuple[list[dict[str, Any]], str]:
    """A call (its assistant line) and its result (a user line), chained after `parent`."""
    call_id = f"toolu_{n:08d}{'x' * 16}"
    asked, answered = str(uuid.uuid4()), str(uuid.uuid4())
    ts = "2026-01-01T00:00:01.000Z"
    call = {
        "type": "assistant",
        "uuid": asked,
        "parentUuid": parent,
        "timestamp": ts,
        "message": {
            "id": f"msg_{n:08d}",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"n": n}}],
        },
    }
    result = {
        "type": "user",
        "uuid": answered,
        "parentUuid": asked,
        "timestamp": ts,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}],
        },
    }
    return [call, result], answered


def _feed(parser: ClaudeParser, first: int, count: int, parent: str) -> tuple[list[Any], str]:
    items = []
    for n in range(first, first + count):
        lines, parent = _lines(n, parent)
        for line in lines:
            items += parser.feed(line)
    return items, parent


def test_a_long_session_keeps_no_row_per_tool_call() -> None:
    parser = ClaudeParser()
    _, parent = _feed(parser, 0, 2_000, str(uuid.uuid4()))  # past the calls remembered
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        items, _ = _feed(parser, 2_000, CALLS, parent)
        del items
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown / CALLS <= MAX_BYTES_PER_CALL, f"{grown / CALLS:.0f} bytes a call"


def test_every_result_names_its_call() -> None:
    items, _ = _feed(ClaudeParser(), 0, CALLS, str(uuid.uuid4()))
    calls = [i for i in items if isinstance(i, ToolUseEvent)]
    results = [i for i in items if isinstance(i, ToolResultEvent)]
    assert len(calls) == len(results) == CALLS
    assert {r.name for r in results} == {"Bash"}
