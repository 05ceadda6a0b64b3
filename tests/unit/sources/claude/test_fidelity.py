"""Claude Code fidelity on real recorded lines: titles, queued messages, compaction, sub-agent
usage. Each case takes lines from a fixture transcript and changes only what it says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.models import (
    SessionItem,
    SystemEvent,
    TurnCompleteEvent,
    TurnDurationEvent,
    UserEvent,
)
from sidemirror.core.store import state_after
from sidemirror.sources.claude.meta import meta_from_row, meta_row, read_meta
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.positions import MAIN, Positions

from tests.harness.paths import FIXTURES

CLAUDE = FIXTURES / "claude"
TODO_APP = CLAUDE / "sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
INIT = CLAUDE / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
SPOTTER = CLAUDE / "spotter" / "tool_heavy.jsonl"
TURN_2 = CLAUDE / "incremental-subagents" / "turn-2.jsonl"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def parse(recs: list[dict[str, Any]]) -> tuple[ClaudeParser, list[SessionItem]]:
    parser = ClaudeParser()
    return parser, [item for r in recs for item in parser.feed(r)]


def fed_numbered(recs: list[dict[str, Any]]) -> list[list[SessionItem]]:
    """Each record's items, numbered as a session numbers them (a byte offset per line)."""
    parser, positions = ClaudeParser(), Positions()
    fed: list[list[SessionItem]] = []
    for n, record in enumerate(recs, 1):
        fed.append(parser.feed(record, MAIN, n * 1000))
        positions.number(MAIN, n * 1000, fed[-1])
    return fed


def write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return path


# --- (a) titles ---


def test_a_summary_of_another_session_does_not_title_this_one(tmp_path: Path) -> None:
    # fe5e1c67 starts with a summary whose leaf is a record of 1af7fc5e, not of itself.
    recs = records(TODO_APP)
    parser, _ = parse(recs)
    assert parser.title is None
    assert parser.first_prompt == "/orchestrator create TODO app by Next.js"
    meta = read_meta(write(tmp_path / "a.jsonl", recs))
    assert meta is not None and meta.title == parser.first_prompt


def test_a_summary_titles_the_session_its_leaf_is_in(tmp_path: Path) -> None:
    summary = records(TODO_APP)[0]
    recs = [summary, *records(INIT)]  # 1af7fc5e holds the leaf
    parser, _ = parse(recs)
    assert parser.title == summary["summary"]
    meta = read_meta(write(tmp_path / "b.jsonl", recs))
    assert meta is not None and meta.title == summary["summary"]


# --- (b) queued messages ---


def queued_session(text: str) -> list[dict[str, Any]]:
    """The spotter session with its queued `/mcp` replaced by a message to the model."""
    recs = records(SPOTTER)
    for r in recs:
        if r.get("type") == "queue-operation" and r.get("operation") == "enqueue":
            r["content"] = text
    return recs


def test_a_message_typed_while_the_agent_worked_is_shown_where_it_was_sent() -> None:
    recs = queued_session("also check the logs")
    _, items = parse(recs)
    users = [i for i in items if isinstance(i, UserEvent)][:2]
    assert [(u.content, u.queued) for u in users] == [
        ("start phoenix in background", None),
        ("also check the logs", True),
    ]
    queued = users[1]
    removed = next(r for r in recs if r.get("operation") == "remove")
    assert queued.ts == removed["timestamp"]
    # It sits between the tool call it interrupted and that call's result.
    order = [i.type for i in items]
    assert order.index("tool_use") < items.index(queued) < order.index("tool_result")
    assert queued.model_dump(mode="json")["queued"] is True
    assert "queued" not in users[0].model_dump(mode="json")  # absent on what was typed idle


def test_a_queued_message_sent_as_the_next_prompt_is_shown_once() -> None:
    recs = queued_session("also check the logs")
    cut = next(i for i, r in enumerate(recs) if "[Request interrupted" in json.dumps(r))
    first = next(r for r in recs if r.get("type") == "user")
    recs = [
        *recs[: cut + 1],
        dict(first, message={"role": "user", "content": "also check the logs"}),
    ]
    parser, items = parse(recs)
    users = [i for i in items if isinstance(i, UserEvent)]
    assert [u.content for u in users].count("also check the logs") == 1
    assert parser.turns.count == 2  # the real prompt still opened its turn


def test_a_queued_local_command_is_not_a_message() -> None:
    _, items = parse(records(SPOTTER))  # `/mcp` queued, then run as a command
    assert not [i for i in items if isinstance(i, UserEvent) and i.queued]


# --- (d) compaction ---


def test_one_compaction_is_one_row_with_its_summary() -> None:
    base = records(INIT)
    ts = base[-1]["timestamp"]
    boundary = {
        **{k: base[-1][k] for k in ("sessionId", "cwd", "version", "gitBranch")},
        "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
        "isMeta": False, "timestamp": ts, "uuid": "b0", "level": "info",
        "compactMetadata": {"trigger": "manual", "preTokens": 48210},
    }  # fmt: skip
    summary = {
        **{k: base[-1][k] for k in ("sessionId", "cwd", "version", "gitBranch")},
        "type": "user", "parentUuid": "b0", "uuid": "s0", "timestamp": ts,
        "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
        "message": {"role": "user", "content": "This session is being continued. Summary: X"},
    }  # fmt: skip
    _, items = parse([*base, boundary, summary])
    compact = [i for i in items if isinstance(i, SystemEvent) and i.subtype == "compact"]
    assert len(compact) == 1
    assert compact[0].content.startswith("Conversation compacted (manual, 48210 tokens before)")
    assert compact[0].content.endswith("Summary: X")


# --- (e) sub-agent usage ---


def test_a_task_results_usage_counts_when_its_sub_agent_was_not_read() -> None:
    recs = records(TURN_2)  # its agent file is not fed: only the Task result tells
    _, items = parse(recs)
    (turn,) = [i for i in items if isinstance(i, TurnCompleteEvent)]
    result = next(r["toolUseResult"] for r in recs if "agentId" in (r.get("toolUseResult") or {}))
    usage = result["usage"]
    sub_tokens = sum(
        usage[k]
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )
    assert turn.subagent_tokens == sub_tokens
    # The result does not name the sub-agent's model: its cost is unknown, not guessed.
    assert turn.subagent_cost_usd is None and turn.cost_usd is None
    assert turn.cost_source == "unknown_model"
    assert turn.cache_read_tokens >= usage["cache_read_input_tokens"]


def test_sub_agent_messages_read_are_not_counted_twice() -> None:
    main = records(TURN_2)
    agent = records(TURN_2.with_suffix("") / "subagents" / "agent-a485154.jsonl")
    parser = ClaudeParser()
    items: list[SessionItem] = []
    for r in main:  # the agent's lines before its Task's result, as the merge orders them
        if (
            r.get("toolUseResult", {}).get("agentId")
            if isinstance(r.get("toolUseResult"), dict)
            else False
        ):
            for a in agent:
                items += parser.feed(a, "a485154")
        items += parser.feed(r)
    (turn,) = [i for i in items if isinstance(i, TurnCompleteEvent)]
    ids: dict[str, int] = {}
    for a in agent:
        m = a.get("message") or {}
        if a.get("type") == "assistant" and isinstance(m.get("usage"), dict):
            u = m["usage"]
            total = sum(u.get(k, 0) for k in ("input_tokens", "output_tokens",
                "cache_read_input_tokens", "cache_creation_input_tokens"))  # fmt: skip
            ids[m["id"]] = max(ids.get(m["id"], 0), total)
    assert turn.subagent_tokens == sum(ids.values())  # the messages, not the result's usage too
    # Their cost is priced per message with the model each names, and is part of the turn's.
    assert turn.subagent_cost_usd is not None and turn.cost_usd is not None
    assert 0 < turn.subagent_cost_usd < turn.cost_usd


# --- (c) inline sidechains ---


def inline_agent_session(agent_id: str) -> list[dict[str, Any]]:
    """turn-2 with its sub-agent's lines written inline, before the Task's result, without the
    sub-agent's root prompt; the result names `agent_id`."""
    agent = records(TURN_2.with_suffix("") / "subagents" / "agent-a485154.jsonl")[1:]
    out: list[dict[str, Any]] = []
    for r in records(TURN_2):
        result = r.get("toolUseResult")
        if isinstance(result, dict) and result.get("agentId"):
            out += agent
            r = dict(r, toolUseResult=dict(result, agentId=agent_id))
        out.append(r)
    return out


def test_an_inline_thread_without_its_root_nests_under_the_task_naming_its_agent() -> None:
    _, items = parse(inline_agent_session("a485154"))
    task = next(i for i in items if i.type == "tool_use" and i.name == "Task")
    nested = [i for i in items if i.parent_tool_use_id]
    assert len(nested) > 20 and {i.parent_tool_use_id for i in nested} == {task.tool_use_id}


def test_an_inline_agent_thread_no_task_names_is_shown_unplaced_at_the_next_prompt() -> None:
    recs = inline_agent_session("someone-else")
    first = next(r for r in recs if r.get("type") == "user")
    _, before = parse(recs)
    assert not [i for i in before if i.parent_tool_use_id]  # held until the next prompt
    _, items = parse([*recs, dict(first, message={"role": "user", "content": "next"})])
    groups = [i for i in items if i.type == "tool_use" and i.name == "Unplaced sub-agent"]
    assert len(groups) == 1 and groups[0].kind == "task"
    nested = [i for i in items if i.parent_tool_use_id == groups[0].tool_use_id]
    assert len(nested) > 20
    assert items.index(groups[0]) < items.index(nested[0])


def test_an_inline_thread_no_task_can_claim_is_shown_unplaced() -> None:
    # fe5e1c67 (Claude Code 1.0.98): inline threads chained from a root prompt, no agentId.
    recs = records(TODO_APP)
    tasks = [
        b["id"] for r in recs if r.get("type") == "assistant" and not r.get("isSidechain")
        for b in r["message"]["content"] if b.get("type") == "tool_use" and b["name"] == "Task"
    ]  # fmt: skip
    first_task = tasks[-1]  # the last: no other Task still runs to claim its thread
    # The Task call and its result are lost (another file, a cut transcript): nothing claims it.
    kept = [r for r in recs if first_task not in json.dumps(r.get("message", ""))]
    _, whole = parse(recs)
    _, items = parse(kept)
    groups = [i for i in items if i.type == "tool_use" and i.name == "Unplaced sub-agent"]
    assert len(groups) == 1
    nested = [i for i in items if i.parent_tool_use_id == groups[0].tool_use_id]
    lost = [i for i in whole if i.parent_tool_use_id == first_task]
    assert [(i.type, i.ts) for i in nested] == [(i.type, i.ts) for i in lost]


# --- (f) turn_duration ---


def test_a_turn_that_ends_at_turn_duration_takes_its_duration() -> None:
    # turn-2 (Claude Code 2.1.7) as versions that write no stop_reason on the last line have it:
    # the turn ends at `turn_duration`, whose figure leaves out the time a permission waited.
    recs = records(TURN_2)
    for r in recs:
        if r.get("type") == "assistant" and r["message"].get("stop_reason") == "end_turn":
            r["message"]["stop_reason"] = None
    (duration,) = [r for r in recs if r.get("subtype") == "turn_duration"]
    _, items = parse(recs)
    (turn,) = [i for i in items if isinstance(i, TurnCompleteEvent)]
    assert turn.duration_ms == duration["durationMs"] == 529891
    assert turn.status == "ok"


def test_a_turn_closed_at_end_turn_takes_the_agents_own_duration_when_it_comes() -> None:
    # turn-2 (Claude Code 2.1.7) as written: `end_turn` closes the turn at once (measured to
    # it: 9 m 8 s of wall time), then `turn_duration` says the agent's own 529,891 ms, which
    # leaves out the time a permission waited. The turn is not held open for it; the figure
    # comes after, naming the turn it measures.
    recs = records(TURN_2)
    (duration,) = [r for r in recs if r.get("subtype") == "turn_duration"]
    fed = fed_numbered(recs)
    items = [item for some in fed for item in some]
    end_turn = next(
        n for n, r in enumerate(recs) if r.get("message", {}).get("stop_reason") == "end_turn"
    )
    (turn,) = [i for i in fed[end_turn] if isinstance(i, TurnCompleteEvent)]
    assert turn.duration_ms == 547831  # emitted at end_turn, as before: wall time
    assert fed[recs.index(duration)] == items[-1:]  # the figure, after it
    (correction,) = [i for i in items if isinstance(i, TurnDurationEvent)]
    assert items[-1] is correction and correction.ts == duration["timestamp"]
    assert correction.turn_seq == turn.seq > 0
    assert correction.duration_ms == duration["durationMs"] == 529891
    # The transcript still says the turn ended: idle, not running for want of a turn_complete.
    assert state_after(items) == "idle"


def test_a_turn_duration_written_after_the_next_prompt_does_not_close_that_prompts_turn() -> None:
    # A message queued during turn 1 is sent as the next prompt as soon as turn 1 ends: its line
    # can come before turn 1's `turn_duration` (written seconds after the turn).
    recs = records(TURN_2)
    (duration,) = [r for r in recs if r.get("subtype") == "turn_duration"]
    at = recs.index(duration)
    first = next(r for r in recs if r.get("type") == "user")
    last_reply = next(
        r for r in reversed(recs) if r.get("type") == "assistant" and r["message"]["stop_reason"]
    )
    prompt = dict(first, uuid="q-1", timestamp="2026-01-14T19:29:11.900Z",
                  message={"role": "user", "content": "now add the tests"})  # fmt: skip
    message = dict(
        last_reply["message"], id="msg_next", content=[{"type": "text", "text": "On it."}]
    )
    reply = dict(last_reply, uuid="q-2", parentUuid="q-1", requestId="req_next",
                 timestamp="2026-01-14T19:29:20.000Z", message=message)  # fmt: skip
    items = [item for some in fed_numbered([*recs[:at], prompt, duration, reply]) for item in some]
    turns = [i for i in items if isinstance(i, TurnCompleteEvent)]
    assert [t.turn for t in turns] == [1, 2]
    # Turn 2 ends at its own reply, measured from its own prompt: not turn 1's figure.
    assert turns[1].duration_ms == 8100 and turns[1].ts == reply["timestamp"]
    # The figure is turn 1's, which closed at its end_turn: it names turn 1.
    (correction,) = [i for i in items if isinstance(i, TurnDurationEvent)]
    assert (correction.turn_seq, correction.duration_ms) == (turns[0].seq, 529891)


def test_a_queued_message_whose_prompt_line_comes_first_is_shown_once_marked() -> None:
    recs = queued_session("also check the logs")
    cut = next(i for i, r in enumerate(recs) if "[Request interrupted" in json.dumps(r))
    removed = next(i for i, r in enumerate(recs) if r.get("operation") == "remove")
    first = next(r for r in recs if r.get("type") == "user")
    again = dict(first, message={"role": "user", "content": "also check the logs"})
    # Sent as the next prompt: its line, then the queue record saying it left the queue.
    recs = [*recs[:removed], *recs[removed + 1 : cut + 1], again, recs[removed]]
    _, items = parse(recs)
    shown = [i for i in items if isinstance(i, UserEvent) and i.content == "also check the logs"]
    assert len(shown) == 1 and shown[0].queued is True and shown[0].ts == again["timestamp"]


def test_an_index_row_from_before_is_read_again_not_trusted(tmp_path: Path) -> None:
    # Rows the file index kept before this rule titled fe5e1c67 by 1af7fc5e's summary.
    path = write(tmp_path / "c.jsonl", records(TODO_APP))
    meta = read_meta(path)
    assert meta is not None
    row = meta_row(meta)
    assert meta_from_row(path, row) == meta
    stale = {k: v for k, v in row.items() if k != "v"} | {"title": records(TODO_APP)[0]["summary"]}
    assert meta_from_row(path, stale) is None  # so the file is read again
