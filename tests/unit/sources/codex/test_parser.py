"""Codex rollouts and `codex exec --json` → items, over a real rollout and exact synthetic lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import TurnCompleteEvent
from sidemirror.sources.codex.exec import CodexExecConverter
from sidemirror.sources.codex.parser import CodexParser

from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.transcripts import records

FIXTURES = sorted((FIXTURE_ROOT / "codex").glob("*.jsonl"))


def parse(lines: list[dict[str, Any]]) -> tuple[CodexParser, list[Any]]:
    parser = CodexParser()
    items = []
    for record in lines:
        items += parser.feed(record)
    return parser, items


def independent_counts(lines: list[dict[str, Any]]) -> dict[str, int]:
    calls = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
    outputs = {"function_call_output", "custom_tool_call_output"}
    payloads = [(r["type"], r["payload"]) for r in lines]
    items = [p for t, p in payloads if t == "response_item"]
    events = [p for t, p in payloads if t == "event_msg"]
    plans = {
        p["call_id"] for p in items if p["type"] == "function_call" and p["name"] == "update_plan"
    }
    prompts = sum(1 for e in events if e["type"] == "user_message")
    closes = sum(1 for e in events if e["type"] in ("task_complete", "turn_aborted"))
    web = sum(1 for p in items if p["type"] == "web_search_call")
    # A turn also closes when the next prompt arrives while it is still open.
    open_turn, closed_by_prompt = False, 0
    for e in events:
        if e["type"] == "user_message":
            closed_by_prompt += open_turn
            open_turn = True
        elif e["type"] in ("task_complete", "turn_aborted"):
            open_turn = False
    return {
        "user": prompts,
        "assistant": sum(1 for p in items if p["type"] == "message" and p["role"] == "assistant"),
        "thinking": sum(
            1
            for p in items
            if p["type"] == "reasoning" and any(s.get("text") for s in p["summary"])
        ),
        "tool_use": sum(1 for p in items if p["type"] in calls and p.get("call_id") not in plans),
        "tool_result": web
        + sum(1 for p in items if p["type"] in outputs and p["call_id"] not in plans),
        "plan": len(plans),
        "turn_complete": closes + closed_by_prompt,
    }


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_counts_match_raw_file(path: Path) -> None:
    lines = records(path)
    parser, items = parse(lines)
    expected = independent_counts(lines)
    assert {k: sum(1 for i in items if i.type == k) for k in expected} == expected
    meta = lines[0]["payload"]
    assert (parser.session_id, parser.cwd) == (meta["id"], meta["cwd"])
    kinds = {i.name: i.kind for i in items if i.type == "tool_use"}
    assert kinds["exec_command"] == "execute"
    assert kinds["mcp__node_repl__js"] == "mcp"


def _line(
    kind: str, payload: dict[str, Any], ts: str = "2026-01-01T00:00:00.000Z"
) -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def _tokens(inp: int, cached: int, out: int) -> dict[str, Any]:
    usage = {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": 0,
        "total_tokens": inp + out,
    }
    return _line(
        "event_msg",
        {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}},
    )


def _msg(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return _line(
        "response_item",
        {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
    )


SESSION = [
    _line("session_meta", {"id": "abc", "cwd": "/w", "git": {"branch": "main"}}),
    _line("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}),
    _msg("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
    _tokens(100, 20, 5),
    _msg("user", "fix the bug"),
    _line("event_msg", {"type": "user_message", "message": "fix the bug", "images": []}),
    _line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
    _line(
        "response_item",
        {
            "type": "reasoning",
            "encrypted_content": "gAAA",
            "summary": [{"type": "summary_text", "text": "**Looking**"}],
        },
    ),
    _line("event_msg", {"type": "agent_reasoning", "text": "**Looking**"}),
    _line(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "ls"]}),
        },
    ),
    _line(
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps(
                {"output": "a\n", "metadata": {"exit_code": 2, "duration_seconds": 0.5}}
            ),
        },
    ),
    _line(
        "response_item",
        {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "call_id": "c2",
            "input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n",
        },
    ),
    _line(
        "response_item",
        {
            "type": "custom_tool_call_output",
            "call_id": "c2",
            "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n",
        },
    ),
    _line(
        "response_item",
        {
            "type": "function_call",
            "name": "update_plan",
            "call_id": "c3",
            "arguments": json.dumps({"plan": [{"step": "s", "status": "done"}]}),
        },
    ),
    _line("response_item", {"type": "function_call_output", "call_id": "c3", "output": "ok"}),
    _line(
        "response_item",
        {
            "type": "web_search_call",
            "status": "completed",
            "action": {"type": "search", "query": "python"},
        },
    ),
    _tokens(300, 50, 40),
    _line("event_msg", {"type": "agent_message", "message": "Fixed."}),
    _msg("assistant", "Fixed."),
    _tokens(300, 50, 40),  # repeated totals add nothing
    _line(
        "event_msg",
        {"type": "task_complete", "last_agent_message": "Fixed."},
        ts="2026-01-01T00:00:07.000Z",
    ),
    _msg("user", "again"),
    _line("event_msg", {"type": "user_message", "message": "again"}),
    _tokens(350, 60, 45),
    _line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
]


def test_rollout_lines_in_full() -> None:
    parser, items = parse(SESSION)
    assert [i.type for i in items] == [
        "user",
        "thinking",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "plan",
        "tool_use",
        "tool_result",
        "assistant",
        "turn_complete",
        "user",
        "turn_complete",
    ]
    assert parser.git_branch == "main" and parser.first_prompt == "fix the bug"
    shell, shell_out, patch, patch_out = items[2:6]
    assert (shell.kind, shell.input, shell_out.is_error, shell_out.duration_ms) == (
        "execute",
        "ls",
        True,
        500,
    )
    assert (patch.kind, patch.input, patch_out.output) == ("edit", "a.py", "ok\n")
    assert (items[7].kind, items[7].input) == ("fetch", "python")
    first, second = items[10], items[12]
    assert isinstance(first, TurnCompleteEvent) and isinstance(second, TurnCompleteEvent)
    assert (first.input_tokens, first.cache_read_tokens, first.output_tokens) == (170, 30, 35)
    assert (first.status, first.duration_ms, first.model) == ("ok", 7000, "gpt-5-codex")
    assert (second.input_tokens, second.cache_read_tokens, second.status) == (40, 10, "stopped")


def test_codex_exec_json() -> None:
    conv = CodexExecConverter("d")
    lines = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "**Plan**"}},
        {
            "type": "item.started",
            "item": {
                "id": "i1",
                "type": "command_execution",
                "command": "bash -lc ls",
                "aggregated_output": "",
                "exit_code": None,
                "status": "in_progress",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "i1",
                "type": "command_execution",
                "command": "bash -lc ls",
                "aggregated_output": "a\n",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "i2",
                "type": "file_change",
                "status": "completed",
                "changes": [{"path": "a.py", "kind": "update"}],
            },
        },
        {"type": "item.completed", "item": {"id": "i3", "type": "agent_message", "text": "Done"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 50, "cached_input_tokens": 10, "output_tokens": 7},
        },
    ]
    out = []
    for line in lines:
        out += conv.convert(line)
    out += conv.finish()
    items = [e.item for e in out if e.item is not None]
    assert [i.type for i in items] == [
        "thinking",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "assistant",
        "turn_complete",
    ]
    assert {e.session_id for e in out} == {"t-1"}
    turn = items[-1]
    assert isinstance(turn, TurnCompleteEvent)
    assert (turn.input_tokens, turn.cache_read_tokens, turn.output_tokens) == (40, 10, 7)
    assert conv.run_status == "ok"
    failed = CodexExecConverter("d")
    failed.convert({"type": "turn.started"})
    failed.convert({"type": "turn.failed", "error": {"message": "boom"}})
    assert failed.run_status == "failed"
