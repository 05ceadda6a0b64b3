"""Claude stream-json → items, over the real captures in tests/fixtures/stream-json/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import (
    LIVE_ONLY_TYPES,
    AssistantDeltaEvent,
    AssistantEvent,
    SystemEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolProgressEvent,
    TurnCompleteEvent,
    UserEvent,
)
from sidemirror.sources.claude.stream_json import StreamJsonConverter

from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.transcripts import records

FIXTURES = sorted((FIXTURE_ROOT / "stream-json").glob("*.jsonl"))
# Runs that went to their end (the interrupted capture is tested on its own).
COMPLETE = [p for p in FIXTURES if p.name != "interrupt.jsonl"]


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


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: p.name)
def test_fixture_counts_match_raw_file(path: Path) -> None:
    lines = records(path)
    conv, out = convert(lines)
    items = [e.item for e in out if e.item is not None and e.item.type != "assistant_delta"]
    got = {k: sum(1 for i in items if i.type == k) for k in independent_counts(lines)}
    assert got == independent_counts(lines)
    assert {e.session_id for e in out} == {lines[0]["session_id"]}
    assert conv.run_status == "ok"


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: p.name)
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


def test_stream_without_result_is_a_stopped_run_and_keeps_streamed_text() -> None:
    conv, out = convert(_stream(["Hello", " wor"], "Hello world")[:-1])
    final = [e.item for e in out if isinstance(e.item, AssistantEvent)]
    assert [f.content for f in final] == ["Hello wor"]
    assert conv.run_status == "stopped"


def stored(out: list[Any]) -> list[Any]:
    return [e.item for e in out if e.item is not None and e.item.type not in LIVE_ONLY_TYPES]


def fixture(name: str) -> tuple[StreamJsonConverter, list[Any]]:
    return convert(records(next(p for p in FIXTURES if p.name == name)))


def test_an_interrupted_run_is_stopped_not_failed() -> None:
    conv, out = fixture("interrupt.jsonl")
    items = stored(out)
    assert [i.type for i in items] == ["system", "turn_complete"]
    assert (items[0].subtype, items[0].content) == ("interrupted", "[Request interrupted by user]")
    turn = items[1]
    assert (turn.status, turn.stop_reason, turn.context_window) == (
        "stopped",
        "interrupted",
        200000,
    )
    assert conv.run_status == "stopped"  # the abort's stack traces are not the user's error


def test_background_tasks_and_sub_agents_nest_under_their_tool_call() -> None:
    _, out = fixture("tasks-and-progress.jsonl")
    tasks = [
        (i.parent_tool_use_id, i.content)
        for i in stored(out)
        if getattr(i, "subtype", "") == "task"
    ]
    assert tasks == [
        ("toolu_agent", "Sub-agent started: Map the tests"),
        ("toolu_agent", "Task finished: Map the tests\nOne test file: tests/test_app.py"),
        ("toolu_bg", "Task started in the background: npm test"),
        ("toolu_bg", "Task finished: npm test"),  # task_updated names no tool: the start did
    ]


def test_progress_goes_out_live_on_the_running_card() -> None:
    _, out = fixture("tasks-and-progress.jsonl")
    progress = [e.item for e in out if isinstance(e.item, ToolProgressEvent)]
    assert [(p.tool_use_id, p.parent_tool_use_id, p.elapsed_ms) for p in progress] == [
        ("toolu_grep", "toolu_agent", 500),  # tool_progress
        ("toolu_agent", None, 1200),  # task_progress
    ]


def test_thinking_streams_live_then_its_item_replaces_it() -> None:
    _, out = fixture("tasks-and-progress.jsonl")
    deltas = [e.item for e in out if isinstance(e.item, ThinkingDeltaEvent)]
    thinking = next(e.item for e in out if isinstance(e.item, ThinkingEvent))
    assert "".join(d.text for d in deltas) == thinking.content
    assert {d.segment_id for d in deltas} == {thinking.segment_id} == {"msg_1:0"}
    assert not [e for e in out if isinstance(e.item, AssistantDeltaEvent)]


def test_status_denials_and_context() -> None:
    _, out = fixture("tasks-and-progress.jsonl")
    lines = [(i.subtype, i.content) for i in stored(out) if isinstance(i, SystemEvent)]
    assert ("mode", "Mode: plan") in lines
    assert ("status", "Compacting the conversation") in lines
    assert lines[-1] == ("permission_denied", "Permission denied: Bash (rm -rf build)")
    assert len(lines) == 7  # "requesting" (the spinner) shows nothing
    turn = stored(out)[-1]
    assert isinstance(turn, TurnCompleteEvent)
    assert (turn.stop_reason, turn.context_tokens, turn.context_window) == (
        "end_turn",
        1210,
        200000,
    )


def test_an_image_in_a_prompt_is_an_attachment_not_text() -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    content = [image, {"type": "text", "text": "What is this?"}]
    prompt = {"type": "user", "session_id": "s", "message": {"role": "user", "content": content}}
    _, out = convert([prompt])
    user = next(e.item for e in out if isinstance(e.item, UserEvent))
    assert user.content == "What is this?"
    assert [(a.media_type, a.size) for a in user.attachments] == [("image/png", 70)]


@pytest.mark.parametrize("odd", [None, 7, True, "x", [], {}, [{"type": {}}], {"status": []}])
def test_drifting_field_types_never_raise(odd: Any) -> None:
    fields = [
        "task_id", "tool_use_id", "description", "status", "patch", "usage", "summary",
        "permissionMode", "compact_result", "elapsed_time_seconds", "permission_denials",
        "modelUsage", "stop_reason", "terminal_reason", "event", "message", "state",
    ]  # fmt: skip
    records: list[dict[str, Any]] = [
        {"type": "system", "subtype": subtype, "session_id": "s", **dict.fromkeys(fields, odd)}
        for subtype in (
            "status", "task_started", "task_updated", "task_progress", "task_notification",
            "session_state_changed",
        )
    ]  # fmt: skip
    records += [
        {"type": kind, "session_id": "s", **dict.fromkeys(fields, odd)}
        for kind in ("tool_progress", "stream_event", "assistant", "user", "result")
    ]
    convert(records)  # no exception: one bad line never stops a session


def test_thinking_deltas_without_their_block_start_still_stream_live() -> None:
    lines = records(next(p for p in FIXTURES if p.name == "tasks-and-progress.jsonl"))
    start = next(
        i for i, r in enumerate(lines) if r.get("event", {}).get("type") == "content_block_start"
    )
    del lines[start]  # the thinking block's start never arrived
    _, out = convert(lines)
    deltas = [e.item for e in out if isinstance(e.item, ThinkingDeltaEvent)]
    thinking = next(e.item for e in out if isinstance(e.item, ThinkingEvent))
    assert "".join(d.text for d in deltas) == "The tests live under tests/; an agent can map them."
    assert thinking.content == "The tests live under tests/; an agent can map them."
    assert {d.segment_id for d in deltas} == {thinking.segment_id}  # the panel swaps them


def test_stream_cut_off_before_its_result_is_a_stopped_run() -> None:
    lines = records(next(p for p in FIXTURES if p.name == "tasks-and-progress.jsonl"))
    conv, out = convert([r for r in lines if r.get("type") != "result"])
    turn = next(e.item for e in out if isinstance(e.item, TurnCompleteEvent))
    assert (turn.status, conv.run_status) == ("stopped", "stopped")
