"""Claude Code's task tools (TaskCreate/TaskUpdate/TaskList/TaskGet) give the plan TodoWrite gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.models import ErrorEvent, PlanEvent, SessionItem, ToolUseEvent
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.stream_json import StreamJsonConverter

from tests.harness.paths import FIXTURES

TASKS = FIXTURES / "claude" / "schema-task-tools" / "5f0c1d2e-7a3b-4c4d-9e8f-0a1b2c3d4e5f.jsonl"

# What the user must see after each change, in order (subject, status).
EXPECTED = [
    [("Read the signup form", "pending")],
    [("Read the signup form", "pending"), ("Add email and password validation", "pending")],
    [
        ("Read the signup form", "pending"),
        ("Add email and password validation", "pending"),
        ("Write tests for validation", "pending"),
    ],
    [
        ("Read the signup form", "in_progress"),
        ("Add email and password validation", "pending"),
        ("Write tests for validation", "pending"),
    ],
    [
        ("Read the signup form", "completed"),
        ("Add email and password validation", "pending"),
        ("Write tests for validation", "pending"),
    ],
    [
        ("Read the signup form", "completed"),
        ("Add email and password validation", "in_progress"),
        ("Write tests for validation", "pending"),
    ],
    # TaskList agrees with the list kept: no extra plan item.
    [
        ("Read the signup form", "completed"),
        ("Add email and password validation", "completed"),
        ("Write tests for validation", "pending"),
    ],
    [("Read the signup form", "completed"), ("Add email and password validation", "completed")],
]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def parse(lines: list[dict[str, Any]], parser: ClaudeParser | None = None) -> list[SessionItem]:
    parser = parser or ClaudeParser()
    return [item for record in lines for item in parser.feed(record)]


def plans(items: list[SessionItem]) -> list[list[tuple[str, str]]]:
    return [[(e.content, e.status) for e in i.entries] for i in items if isinstance(i, PlanEvent)]


def todo_write_twin(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same session as a TodoWrite agent writes it: each plan state as a whole-list call."""
    prompt = next(r for r in lines if r["type"] == "user")
    twin = [prompt]
    for n, state in enumerate(EXPECTED):
        todos = [{"content": c, "status": s, "activeForm": c} for c, s in state]
        call = {"type": "tool_use", "id": f"toolu_todo{n}", "name": "TodoWrite"}
        twin.append(
            {
                "type": "assistant",
                "timestamp": prompt["timestamp"],
                "message": {"role": "assistant", "content": [call | {"input": {"todos": todos}}]},
            }
        )
    return twin


def test_task_tools_keep_the_whole_list_after_each_change() -> None:
    items = parse(records(TASKS))
    assert plans(items) == EXPECTED
    # The task tools are the plan: no tool card, result or error of their own.
    assert not [i for i in items if isinstance(i, ToolUseEvent) and i.name.startswith("Task")]
    assert not [i for i in items if isinstance(i, ErrorEvent)]


def test_a_task_tools_session_shows_the_plan_a_todo_write_session_shows() -> None:
    lines = records(TASKS)
    task_plans = [i for i in parse(lines) if isinstance(i, PlanEvent)]
    todo_plans = [i for i in parse(todo_write_twin(lines)) if isinstance(i, PlanEvent)]
    assert [p.entries for p in task_plans] == [p.entries for p in todo_plans]


def test_stream_json_gives_the_same_plans() -> None:
    converter = StreamJsonConverter("s")
    items: list[SessionItem] = []
    for record in records(TASKS):
        # stream-json carries the same messages; its structured result is `tool_use_result`.
        wire = {"type": record["type"], "message": record["message"], "session_id": "s"}
        if "toolUseResult" in record:
            wire["tool_use_result"] = record["toolUseResult"]
        items += [e.item for e in converter.convert(wire) if e.item is not None]
    assert plans(items) == EXPECTED


def test_a_parse_that_starts_after_the_creates_learns_the_list_from_task_list() -> None:
    """A resumed session (or a parse from a sync point) has not seen the TaskCreate calls: an
    update names a task by id only, and the next TaskList result restores the real subjects."""
    lines = records(TASKS)
    first_update = next(
        n for n, r in enumerate(lines) if "TaskUpdate" in json.dumps(r.get("message"))
    )
    items = parse(lines[first_update:])
    got = plans(items)
    assert got[0] == [("Task #1", "in_progress")]
    task_list_plan = got[3]
    assert task_list_plan == EXPECTED[5]  # TaskList replaced the ids-only list
    assert got[-1] == EXPECTED[-1]


def test_a_failed_update_is_undone_and_its_error_shown() -> None:
    lines = records(TASKS)[:6]  # the prompt, the text, the first two creates
    parser = ClaudeParser()
    parse(lines, parser)
    call = {"type": "tool_use", "id": "toolu_bad", "name": "TaskUpdate"}
    call["input"] = {"taskId": "9", "status": "completed"}
    result = {"type": "tool_result", "tool_use_id": "toolu_bad", "is_error": True}
    result["content"] = "<tool_use_error>Task not found</tool_use_error>"
    ts = lines[-1]["timestamp"]
    bad = [
        {"type": "assistant", "timestamp": ts, "message": {"role": "assistant", "content": [call]}},
        {"type": "user", "timestamp": ts, "message": {"role": "user", "content": [result]}},
    ]
    items = parse(bad, parser)
    assert plans(items) == [EXPECTED[1] + [("Task #9", "completed")], EXPECTED[1]]
    errors = [i for i in items if isinstance(i, ErrorEvent)]
    assert len(errors) == 1 and "Task not found" in errors[0].message
