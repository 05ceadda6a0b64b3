"""Claude stream-json → items, over the real captures in tests/fixtures/stream-json/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import AssistantDeltaEvent, AssistantEvent, TurnCompleteEvent
from sidemirror.sources.claude.stream_json import StreamJsonConverter

from tests.conftest import FIXTURES as FIXTURE_ROOT

FIXTURES = sorted((FIXTURE_ROOT / "stream-json").glob("*.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def convert(lines: list[dict[str, Any]]) -> tuple[StreamJsonConverter, list[Any]]:
    conv = StreamJsonConverter("default")
    out = []
    for record in lines:
        out += conv.convert(record)
    out += conv.finish()
    return conv, out


def independent_counts(lines: list[dict[str, Any]]) -> dict[str, int]:
    """Counted straight from the raw lines, without the converter's logic."""
    counts = {"assistant": 0, "tool_use": 0, "tool_result": 0, "turn_complete": 0}
    for r in lines:
        blocks = (r.get("message") or {}).get("content")
        blocks = blocks if isinstance(blocks, list) else []
        if r["type"] == "assistant":
            counts["assistant"] += sum(
                1 for b in blocks if b["type"] == "text" and b["text"].strip()
            )
            counts["tool_use"] += sum(1 for b in blocks if b["type"] == "tool_use")
        elif r["type"] == "user":
            counts["tool_result"] += sum(1 for b in blocks if b.get("type") == "tool_result")
        elif r["type"] == "result":
            counts["turn_complete"] += 1
    return counts


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_counts_match_raw_file(path: Path) -> None:
    lines = records(path)
    conv, out = convert(lines)
    items = [e.item for e in out if e.item is not None and e.item.type != "assistant_delta"]
    got = {k: sum(1 for i in items if i.type == k) for k in independent_counts(lines)}
    assert got == independent_counts(lines)
    assert {e.session_id for e in out} == {lines[0]["session_id"]}
    assert conv.run_status == "ok"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_result_is_reported_cost_and_tokens(path: Path) -> None:
    lines = records(path)
    result = next(r for r in lines if r["type"] == "result")
    _, out = convert(lines)
    turn = next(e.item for e in out if isinstance(e.item, TurnCompleteEvent))
    assert turn.cost_usd == result["total_cost_usd"]
    assert turn.cost_source == "reported"
    assert turn.status == "ok"
    assert turn.duration_ms == result["duration_ms"]
    assert turn.output_tokens == result["usage"]["output_tokens"]
    assert turn.cache_read_tokens == result["usage"]["cache_read_input_tokens"]
    assert turn.model == next(r for r in lines if r["type"] == "system")["model"]


def test_partial_deltas_concatenate_to_the_final_text() -> None:
    path = next(p for p in FIXTURES if p.name == "streaming-haiku.jsonl")
    _, out = convert(records(path))
    deltas = [e.item for e in out if isinstance(e.item, AssistantDeltaEvent)]
    final = [e.item for e in out if isinstance(e.item, AssistantEvent)]
    assert len(deltas) > 5 and len(final) == 1
    assert {d.segment_id for d in deltas} == {final[0].segment_id}
    assert final[0].segment_id == "msg_01XJ55sFZRFTXp5Njjuwr7Lp:0"
    assert "".join(d.text for d in deltas) == final[0].content
    # Every delta goes out before the complete item that replaces it.
    kinds = [e.item.type for e in out if e.item is not None]
    assert kinds.index("assistant") > max(i for i, k in enumerate(kinds) if k == "assistant_delta")


def _stream(text_pieces: list[str], final: str) -> list[dict[str, Any]]:
    sid = {"session_id": "s", "parent_tool_use_id": None}
    msg = {"id": "m1", "model": "claude-sonnet-4-5", "content": []}
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "model": "claude-sonnet-4-5", **sid},
        {"type": "stream_event", "event": {"type": "message_start", "message": msg}, **sid},
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            **sid,
        },
    ]
    for piece in text_pieces:
        delta = {"type": "text_delta", "text": piece}
        event = {"type": "content_block_delta", "index": 0, "delta": delta}
        lines.append({"type": "stream_event", "event": event, **sid})
    content = [{"type": "text", "text": final}]
    lines.append({"type": "assistant", "message": {**msg, "content": content}, **sid})
    return lines


def test_a_secret_split_across_deltas_never_leaves_unredacted() -> None:
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = f"Use token {key} now"
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    _, out = convert(_stream(pieces, text))
    streamed = "".join(e.item.text for e in out if isinstance(e.item, AssistantDeltaEvent))
    final = next(e.item for e in out if isinstance(e.item, AssistantEvent))
    assert key not in streamed and key[:12] not in streamed
    assert "[REDACTED:" in final.content and key not in final.content
    assert streamed == final.content


def test_error_result_fails_the_run() -> None:
    lines = _stream(["Hi"], "Hi")
    lines.append(
        {
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "session_id": "s",
            "duration_ms": 5,
            "usage": {},
        }
    )
    conv, out = convert(lines)
    turn = next(e.item for e in out if isinstance(e.item, TurnCompleteEvent))
    assert turn.status == "failed"
    assert conv.run_status == "failed"
    assert any(e.item is not None and e.item.type == "error" for e in out)


def test_stream_without_result_is_a_failed_run_and_keeps_streamed_text() -> None:
    conv, out = convert(_stream(["Hello", " wor"], "Hello world")[:-1])
    final = [e.item for e in out if isinstance(e.item, AssistantEvent)]
    assert [f.content for f in final] == ["Hello wor"]
    assert conv.run_status == "failed"
