"""ACP session/update traffic → items, over claude-agent-acp's recorded scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import (
    AssistantDeltaEvent,
    AssistantEvent,
    ToolResultEvent,
    ToolUseEvent,
    TurnCompleteEvent,
)
from sidemirror.sources.acp.converter import AcpConverter

from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.transcripts import records

FIXTURES = sorted((FIXTURE_ROOT / "acp").glob("*.jsonl"))
# The tap's envelope (claude-agent-acp's v2 recordings): every record names its method.
TAP_FIXTURES = [
    p for p in FIXTURES if all("method" in json.loads(line) for line in p.read_text().splitlines())
]


def convert(lines: list[dict[str, Any]]) -> list[Any]:
    conv = AcpConverter("default")
    out = []
    for record in lines:
        out += conv.convert(record)
    return out + conv.finish()


def independent_counts(lines: list[dict[str, Any]]) -> dict[str, int]:
    updates = [
        r["payload"]["update"]
        for r in lines
        if r["kind"] == "notification" and r["method"] == "session/update"
    ]
    tool_ids = {u["toolCallId"] for u in updates if u["sessionUpdate"].startswith("tool_call")}
    finished = {
        u["toolCallId"]
        for u in updates
        if u["sessionUpdate"].startswith("tool_call") and u.get("status") in ("completed", "failed")
    }
    runs: list[tuple[str, str]] = []  # consecutive chunks of one kind and message id are one item
    for u in updates:
        kind = u["sessionUpdate"]
        key = (kind, u.get("messageId", ""))
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message"):
            if not runs or runs[-1] != key or kind == "user_message":
                runs.append(key)
        elif not kind.endswith("update") or kind == "plan_update" or kind.startswith("tool"):
            runs.append(("", ""))
    stops = [u for u in updates if u.get("stopReason")]
    stops += [r for r in lines if r["method"] == "session/prompt" and "stopReason" in r["payload"]]
    return {
        "tool_use": len(tool_ids),
        "tool_result": len(finished),
        "assistant": sum(1 for k, _ in runs if k == "agent_message_chunk"),
        "thinking": sum(1 for k, _ in runs if k == "agent_thought_chunk"),
        "user": sum(1 for k, _ in runs if k == "user_message"),
        "plan": sum(1 for u in updates if u["sessionUpdate"] in ("plan", "plan_update")),
        "turn_complete": len(stops),
    }


@pytest.mark.parametrize("path", TAP_FIXTURES, ids=lambda p: p.name)
def test_fixture_counts_match_raw_file(path: Path) -> None:
    lines = records(path)
    items = [e.item for e in convert(lines) if e.item is not None]
    expected = independent_counts(lines)
    assert not [i for i in items if i.type == "system" and i.subtype == "unknown"]
    assert {k: sum(1 for i in items if i.type == k) for k in expected} == expected
    # Every tool result follows its tool call.
    order = [(i.type, getattr(i, "tool_use_id", None)) for i in items]
    for n, (kind, tool_id) in enumerate(order):
        if kind == "tool_result":
            assert ("tool_use", tool_id) in order[:n]


def test_tool_name_kind_and_title_from_later_updates() -> None:
    out = convert(records(next(p for p in FIXTURES if p.name == "bash-foreground.jsonl")))
    use = next(e.item for e in out if isinstance(e.item, ToolUseEvent))
    assert (use.name, use.kind, use.input) == ("Bash", "execute", "ls -la")
    result = next(e.item for e in out if e.item is not None and e.item.type == "tool_result")
    assert result.output == "a.ts\nb.ts"  # arrives after `completed`, from the tool response
    states = [e.state for e in out if e.state]
    assert "waiting" in states and states[-1] == "idle"


def test_message_chunks_accumulate_and_stream_live() -> None:
    out = convert(records(next(p for p in FIXTURES if p.name == "text-and-thinking.jsonl")))
    final = next(e.item for e in out if isinstance(e.item, AssistantEvent))
    deltas = [e.item for e in out if isinstance(e.item, AssistantDeltaEvent)]
    assert final.content == "Here is the answer."
    assert "".join(d.text for d in deltas) == final.content
    assert {d.segment_id for d in deltas} == {final.segment_id}
    thinking = next(e.item for e in out if e.item is not None and e.item.type == "thinking")
    assert thinking.content == "Let me think about it."


def test_subagent_calls_keep_their_parent_and_order() -> None:
    out = convert(records(next(p for p in FIXTURES if p.name == "subagent-nested.jsonl")))
    uses = [e.item for e in out if isinstance(e.item, ToolUseEvent)]
    assert [(u.tool_use_id, u.parent_tool_use_id) for u in uses] == [
        ("toolu_outer", None),
        ("toolu_inner", "toolu_outer"),
        ("toolu_grandchild_read", "toolu_inner"),
    ]


def _rpc(method: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params, **extra}


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return _rpc("session/update", {"sessionId": "s1", "update": update})


def test_acp_v1_raw_jsonrpc_with_prompt_and_stop_reason() -> None:
    lines = [
        _rpc(
            "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}, id=3
        ),
        _update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read a.py",
                "kind": "read",
                "status": "pending",
            }
        ),
        _update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "x = 1"}}],
            }
        ),
        _update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "key AKIAIOSFODNN7EXAMPLE ok"},
            }
        ),
        _update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "step", "priority": "high", "status": "pending"}],
            }
        ),
        _update(
            {
                "sessionUpdate": "usage_update",
                "used": 10,
                "size": 100,
                "cost": {"amount": 0.25, "currency": "USD"},
            }
        ),
        {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}},
    ]
    items = [e.item for e in convert(lines) if e.item is not None]
    assert [i.type for i in items] == [
        "user",
        "tool_use",
        "tool_result",
        "assistant_delta",
        "assistant_delta",
        "assistant",
        "plan",
        "turn_complete",
    ]
    use = items[1]
    assert isinstance(use, ToolUseEvent) and (use.name, use.kind) == ("read", "read")
    assert "AKIA" not in items[5].model_dump_json()
    turn = items[-1]
    assert isinstance(turn, TurnCompleteEvent)
    assert (turn.status, turn.cost_usd, turn.cost_source) == ("stopped", 0.25, "reported")


def _stored(update: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A client's stored update (Multica's `{timestamp, update}` form), as in
    acp/multica-stored.jsonl."""
    notification = {"sessionId": "multica-7f3a", "update": update}
    return {"timestamp": "2026-02-20T10:00:04Z", "update": notification, **extra}


def test_stored_chunks_join_in_their_sequence_number_order() -> None:
    chunks = [(100, "one "), (102, "three"), (101, "two ")]
    lines = [
        _stored({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}})
        | {"sequenceNumber": n}
        for n, t in chunks
    ]
    items = [e.item for e in convert(lines) if e.item is not None]
    final = [i for i in items if isinstance(i, AssistantEvent)]
    assert [f.content for f in final] == ["one two three"]
    # Live text never shows them out of order: it stops where the order broke.
    live = "".join(i.text for i in items if isinstance(i, AssistantDeltaEvent))
    assert "one two three".startswith(live)


def test_the_sequence_number_may_sit_on_the_update_itself() -> None:
    lines = [
        _stored(
            {
                "sessionUpdate": "agent_message_chunk",
                "sequenceNumber": n,
                "content": {"type": "text", "text": t},
            }
        )
        for n, t in [(7, "b"), (6, "a")]
    ]
    final = [e.item for e in convert(lines) if isinstance(e.item, AssistantEvent)]
    assert [f.content for f in final] == ["ab"]


def test_an_image_in_an_agent_message_is_an_attachment_not_text() -> None:
    png = "iVBORw0KGgo" + "A" * 89  # 100 base64 characters: 75 bytes
    lines = [
        _stored(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Here:"}}
        ),
        _stored(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "image", "mimeType": "image/png", "data": png},
            }
        ),
    ]
    final = [e.item for e in convert(lines) if isinstance(e.item, AssistantEvent)]
    assert [(f.content, [(a.media_type, a.size) for a in f.attachments]) for f in final] == [
        ("Here:", [("image/png", 75)])
    ]
    assert png not in final[0].model_dump_json()


def test_a_refused_call_keeps_its_denial_reason() -> None:
    # claude-agent-acp: the `failed` update says why (`toolResponse.decisionReason`), then a
    # later one puts the terminal back, whose output only says the call was denied.
    out = convert(records(next(p for p in FIXTURES if p.name == "permission-denied.jsonl")))
    result = next(e.item for e in out if isinstance(e.item, ToolResultEvent))
    assert (result.tool_use_id, result.is_error) == ("toolu_denied", True)
    assert result.denial == "Denied by rule Bash(rm:*)"
    assert result.output == "Permission to use Bash has been denied."
