"""What a followed Codex session remembers per tool call stays bounded.

A live rollout is followed for hours; an agent runs thousands of commands. The parser kept each
call's name, each `write_stdin` poll's process and each result's id for the whole session (about
400 bytes a call, never freed). Measured here with tracemalloc over 5,000 calls in one turn, each
a command whose output, then end event, arrive after it, as Codex writes them.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

from sidemirror.core.models import ToolResultEvent, ToolUseEvent
from sidemirror.sources.codex.parser import CodexParser

CALLS = 5_000
MAX_BYTES_PER_CALL = 16


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-01-01T00:00:01.000Z", "type": kind, "payload": payload}


def _call(n: int) -> list[dict[str, Any]]:
    """A command (its output, then its end event), or every fourth call a `write_stdin` poll."""
    call_id = f"call_{n:08d}_{'x' * 16}"
    poll = n % 4 == 0
    name, args = ("write_stdin", {"session_id": n}) if poll else ("exec_command", {})
    end = [] if poll else [_line("event_msg", {"type": "exec_command_end", "call_id": call_id})]
    return [
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": name,
                "call_id": call_id,
                "arguments": json.dumps({**args, "cmd": f"ls {n}"}),
            },
        ),
        _line(
            "response_item", {"type": "function_call_output", "call_id": call_id, "output": "ok"}
        ),
        *end,
    ]


def _feed(parser: CodexParser, first: int, count: int) -> list[Any]:
    kept = []
    for n in range(first, first + count):
        items = [i for record in _call(n) for i in parser.feed(record)]
        kept.append([type(i) for i in items])
    return kept


def test_calls_of_a_long_session_keep_no_row_each() -> None:
    parser = CodexParser()
    for record in (
        _line("session_meta", {"id": "s1", "cwd": "/w"}),
        _line("event_msg", {"type": "user_message", "message": "go"}),
    ):
        parser.feed(record)
    tracemalloc.start()  # before the warm-up: what it keeps and later frees is traced too
    try:
        _feed(parser, 0, CALLS)  # the dicts reach their bound (and table size) before measuring
        before = tracemalloc.take_snapshot()
        _feed(parser, CALLS, CALLS)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(
        s.size_diff
        for s in after.compare_to(before, "filename")
        if s.traceback[0].filename != __file__
    )
    assert grown / CALLS <= MAX_BYTES_PER_CALL, f"{grown / CALLS:.0f} bytes kept per call"


def test_each_call_still_gets_one_card_and_one_named_result() -> None:
    parser = CodexParser()
    parser.feed(_line("event_msg", {"type": "user_message", "message": "go"}))
    kinds = _feed(parser, 0, 3_000)
    assert all(k == [ToolUseEvent, ToolResultEvent] for k in kinds)
    last = [i for record in _call(2_999)[1:] for i in parser.feed(record)]
    assert last == []  # its output and end, written again: already given
