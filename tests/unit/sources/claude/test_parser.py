"""The Claude Code parser on every real fixture, checked against counts made here from raw lines."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import TRUNCATED_FIELDS, SessionItem, ToolUseEvent
from sidemirror.core.pricing import estimate_cost_usd
from sidemirror.core.projection import Projector
from sidemirror.sources.claude.merge import merged
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.files.tailer import JsonlTailer

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "claude"
SESSIONS = {
    "flat": FIXTURES / "flat-agents" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
    "turn-1": FIXTURES / "incremental-subagents" / "turn-1.jsonl",
    "turn-2": FIXTURES / "incremental-subagents" / "turn-2.jsonl",
    "init": FIXTURES / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    "orchestrator": FIXTURES / "sample-project" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "todo-app": FIXTURES / "sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
}


def agent_files(main: Path) -> dict[str, Path]:
    found = sorted(main.parent.glob("agent-*.jsonl"))
    found += sorted(main.with_suffix("").glob("subagents/agent-*.jsonl"))
    return {p.stem[len("agent-") :]: p for p in found}


def parse_session(main: Path) -> list[SessionItem]:
    """The production merge: all files read through tailers, merged, fed to one parser."""
    parser = ClaudeParser()
    tailers = {"": JsonlTailer(main)} | {k: JsonlTailer(p) for k, p in agent_files(main).items()}
    items: list[SessionItem] = []
    for key, _end, record in merged({k: t.poll().records for k, t in tailers.items()}):
        items += parser.feed(record, key)
    return items


def raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def blocks(record: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = (record.get("message") or {}).get("content")
    return [b for b in content if b.get("type") == kind] if isinstance(content, list) else []


def linked_agent_records(main: Path) -> list[dict[str, Any]]:
    """Lines of agent files that a Task in the main file spawned (by prompt or result agentId)."""
    lines = raw(main)
    prompts = {
        b["input"].get("prompt")
        for r in lines
        for b in blocks(r, "tool_use")
        if b["name"] in ("Task", "Agent")
    }
    agent_ids = {
        r["toolUseResult"]["agentId"]
        for r in lines
        if isinstance(r.get("toolUseResult"), dict) and "agentId" in r["toolUseResult"]
    }
    out: list[dict[str, Any]] = []
    for agent_id, path in agent_files(main).items():
        records = raw(path)
        first = records[0]["message"]["content"] if records else None
        if agent_id in agent_ids or first in prompts:
            out += records
    return out


def is_real_prompt(r: dict[str, Any]) -> bool:
    if r.get("type") != "user" or r.get("isSidechain") or r.get("isMeta"):
        return False
    content = r["message"]["content"]
    if blocks(r, "tool_result"):
        return False
    text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
    return not text.lstrip().startswith(("[Request interrupted", "<local-command-", "<bash-"))


def closed_turn_windows(main: Path) -> list[tuple[str, str]]:
    """(start ts, end ts) of every turn that closed, from the main thread's raw lines."""
    lines = [r for r in raw(main) if not r.get("isSidechain")]
    windows: list[tuple[str, str]] = []
    start: str | None = None
    for r in lines:
        if is_real_prompt(r):
            if start is not None:
                windows.append((start, r["timestamp"]))
            start = r["timestamp"]
        elif start is not None and (
            (r.get("type") == "assistant" and r["message"].get("stop_reason") == "end_turn")
            or (r.get("type") == "system" and r.get("subtype") == "turn_duration")
        ):
            windows.append((start, r["timestamp"]))
            start = None
    return windows


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_counts_match_the_raw_file(name: str) -> None:
    main = SESSIONS[name]
    records = raw(main) + linked_agent_records(main)
    uses = [b for r in records for b in blocks(r, "tool_use")]
    todo_ids = {b["id"] for b in uses if b["name"] == "TodoWrite"}
    results = [
        b for r in records for b in blocks(r, "tool_result") if b["tool_use_id"] not in todo_ids
    ]
    items = parse_session(main)
    counts = Counter(item.type for item in items)
    assert counts["tool_use"] == len(uses) - len(todo_ids)
    assert counts["plan"] == len(todo_ids)
    assert counts["tool_result"] == len(results)
    assert counts["turn_complete"] == len(closed_turn_windows(main))
    assert counts["user"] == sum(is_real_prompt(r) for r in raw(main)) + sum(
        1
        for r in records
        if r.get("isSidechain") and r["type"] == "user" and not blocks(r, "tool_result")
    )


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_no_projected_item_exceeds_the_limit(name: str) -> None:
    projector = Projector(500)
    for item in parse_session(SESSIONS[name]):
        data = projector.to_dict(item)
        fields = TRUNCATED_FIELDS.get(item.type)
        if fields:
            assert len(data[fields[0]]) <= 500
            assert data["full_length"] == len(getattr(item, fields[0]))


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_sub_agent_items_link_to_the_task_that_spawned_them(name: str) -> None:
    items = parse_session(SESSIONS[name])
    tasks = {i.tool_use_id: i for i in items if isinstance(i, ToolUseEvent) and i.name == "Task"}
    for item in items:
        if item.parent_tool_use_id is not None:
            assert item.parent_tool_use_id in tasks
    main_lines = raw(SESSIONS[name])
    inline_prompts = [
        r["message"]["content"]
        for r in main_lines
        if r.get("isSidechain") and r["type"] == "user" and r.get("parentUuid") is None
    ]
    prompts = {
        b["id"]: b["input"].get("prompt")
        for r in main_lines
        for b in blocks(r, "tool_use")
        if b["name"] == "Task"
    }
    for (
        prompt
    ) in inline_prompts:  # each inline sub-agent's first item names the Task with its prompt
        first = next(i for i in items if i.type == "user" and getattr(i, "content", None) == prompt)
        assert first.parent_tool_use_id is not None
        assert prompts[first.parent_tool_use_id] == prompt


def test_separate_agent_file_is_linked_and_warmups_are_dropped() -> None:
    items = parse_session(SESSIONS["turn-2"])
    linked = [i for i in items if i.parent_tool_use_id is not None]
    agent = raw(agent_files(SESSIONS["turn-2"])["a485154"])
    assert {i.parent_tool_use_id for i in linked} == {"toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"}
    assert sum(i.type == "tool_use" for i in linked) == sum(
        len(blocks(r, "tool_use")) for r in agent
    )
    flat = parse_session(SESSIONS["flat"])
    assert all(i.parent_tool_use_id is None for i in flat)
    assert not any(getattr(i, "content", "") == "Warmup" for i in flat)


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_turn_tokens_and_cost_match_the_raw_usage(name: str) -> None:
    main = SESSIONS[name]
    usage_lines = [
        r
        for r in raw(main) + linked_agent_records(main)
        if r.get("type") == "assistant" and r["message"].get("usage")
    ]
    turns = [i for i in parse_session(main) if i.type == "turn_complete"]
    windows = closed_turn_windows(main)
    assert len(turns) == len(windows)
    grand = 0.0
    for turn, (start, end) in zip(turns, windows, strict=True):
        best: dict[tuple[str, Any], dict[str, Any]] = {}
        for r in usage_lines:
            if start <= r["timestamp"] <= end:
                key = (r["message"]["id"], r.get("requestId"))
                u = r["message"]["usage"]
                size = sum(v for k, v in u.items() if k.endswith("tokens"))
                if key not in best or size > best[key]["size"]:
                    best[key] = {"size": size, "u": u, "model": r["message"]["model"]}
        cost = 0.0
        for entry in best.values():
            u = entry["u"]
            split = u.get("cache_creation") or {}
            cost += estimate_cost_usd(  # type: ignore[operator]
                entry["model"],
                input_tokens=u["input_tokens"],
                output_tokens=u["output_tokens"],
                cache_read_tokens=u.get("cache_read_input_tokens", 0),
                cache_write_5m_tokens=split.get(
                    "ephemeral_5m_input_tokens", u.get("cache_creation_input_tokens", 0)
                ),
                cache_write_1h_tokens=split.get("ephemeral_1h_input_tokens", 0),
            )
        assert turn.input_tokens == sum(e["u"]["input_tokens"] for e in best.values())
        assert turn.output_tokens == sum(e["u"]["output_tokens"] for e in best.values())
        assert turn.cache_read_tokens == sum(
            e["u"].get("cache_read_input_tokens", 0) for e in best.values()
        )
        assert turn.cache_write_tokens == sum(
            e["u"].get("cache_creation_input_tokens", 0) for e in best.values()
        )
        assert turn.cost_usd == pytest.approx(cost, rel=1e-9)
        assert turn.cost_source == "estimated"
        grand += cost
    assert sum(t.cost_usd or 0.0 for t in turns) == pytest.approx(grand, rel=1e-9)


def test_parsing_again_gives_the_same_items() -> None:
    for main in SESSIONS.values():
        first = [i.model_dump() for i in parse_session(main)]
        assert first == [i.model_dump() for i in parse_session(main)]
