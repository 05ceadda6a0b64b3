"""Codex rollouts: the context figures from token counts, aborted turns, sub-agent threads.

The rollouts are real Codex Desktop 0.104 recordings (tests/fixtures/codex/localpush/: token
counts, event order and timestamps kept; text replaced upstream by placeholders, so the injected
context lost its tags and shows as context items). `turn_aborted` and the sub-agent `session_meta`
are in the shape Codex's protocol writes them (tests/fixtures/NOTICE.md).
"""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.models import SessionItem, TurnCompleteEvent
from sidemirror.sources.codex.parser import CodexParser

from tests.harness.paths import FIXTURES
from tests.transcripts import records

LOCALPUSH = FIXTURES / "codex" / "localpush"
FULL = LOCALPUSH / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
FIXTURE_CODEMIE = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
UNFINISHED = LOCALPUSH / "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"


def parse(lines: list[dict[str, Any]]) -> tuple[CodexParser, list[SessionItem]]:
    parser = CodexParser()
    return parser, [i for r in lines for i in parser.feed(r)]


def turns(items: list[SessionItem]) -> list[TurnCompleteEvent]:
    return [i for i in items if isinstance(i, TurnCompleteEvent)]


def test_a_turn_carries_the_context_the_model_saw_last_and_its_window() -> None:
    lines = records(FULL)
    last_usage = [
        r["payload"]["info"]["last_token_usage"]
        for r in lines
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and r["payload"].get("info")
    ][-1]
    turn = turns(parse(lines)[1])[-1]  # closed by the recording's `task_complete`
    assert turn.status == "ok"
    assert turn.context_tokens == last_usage["input_tokens"] > 0
    assert turn.context_window == 258400


def test_an_aborted_turn_closes_stopped_with_its_reason() -> None:
    lines = records(UNFINISHED)
    aborted = {
        "timestamp": "2026-02-23T12:20:30.000Z",
        "type": "event_msg",
        "payload": {
            "type": "turn_aborted",
            "turn_id": "019c8a70-de0a-7c31-9d5e-4c7b2b1d0001",
            "reason": "interrupted",
            "duration_ms": 51234,
        },
    }
    parser, items = parse(lines)
    assert items[-1].type == "tool_use"  # the recording ends mid-turn: nothing closed it
    closed = turns([i for i in parser.feed(aborted)])
    assert [(t.status, t.stop_reason) for t in closed] == [("stopped", "interrupted")]
    assert closed[0].context_window == 258400


def test_a_sub_agent_rollout_names_the_thread_that_spawned_it() -> None:
    parent = "019c8bfe-ec25-79e0-97d7-bda6a9c575ff"
    meta = records(FULL)[0]
    child_meta = json.loads(json.dumps(meta))
    child_meta["payload"]["id"] = "019c8c00-0000-7000-8000-000000000001"
    spawn = {"parent_thread_id": parent, "depth": 1, "agent_nickname": "Hypatia"}
    child_meta["payload"]["source"] = {"subagent": {"thread_spawn": spawn}}
    # A forked child repeats its parent's meta after its own: the first one is the thread's.
    parser, _ = parse([child_meta, meta])
    assert parser.session_id == "019c8c00-0000-7000-8000-000000000001"
    assert (parser.parent_thread_id, parser.agent_nickname) == (parent, "Hypatia")
    plain, _ = parse([meta])
    assert plain.parent_thread_id is None


def test_a_forked_sub_agent_does_not_show_its_parents_history_as_its_own() -> None:
    """A forked child's rollout: its meta, its parent's meta and history, then its own work from
    its first `turn_context` (Codex writes forks so)."""
    parent_lines = records(FIXTURE_CODEMIE)
    meta = parent_lines[0]
    child_meta = json.loads(json.dumps(meta))
    child_meta["payload"]["id"] = "019e16a0-0000-7000-8000-000000000042"
    spawn = {"parent_thread_id": meta["payload"]["id"], "depth": 1}
    child_meta["payload"]["source"] = {"subagent": {"thread_spawn": spawn}}
    ts = parent_lines[-1]["timestamp"]
    own = [
        {"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt-5.2", "cwd": "/w"}},
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "Review the diff", "kind": "plain"},
        },
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": "Looks right."},
        },
    ]
    child, items = parse([child_meta, *parent_lines, *own])
    assert [(i.type, getattr(i, "content", "")) for i in items] == [
        ("user", "Review the diff"),
        ("assistant", "Looks right."),
    ]
    assert child.session_id == child_meta["payload"]["id"]
    assert child.first_prompt == "Review the diff"
    _, whole_parent = parse(parent_lines)
    assert len(whole_parent) > 40  # the part not shown is the parent's whole session
