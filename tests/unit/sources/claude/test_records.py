"""Claude parser on record shapes the fixtures lack: compaction, errors, interrupts, drift."""

from __future__ import annotations

from typing import Any

from sidemirror.core.models import SessionItem, ToolUseEvent
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.tool_names import tool_kind, tool_summary


def prompt(text: str, ts: str = "2026-01-01T00:00:00.000Z") -> dict[str, Any]:
    return {"type": "user", "timestamp": ts, "message": {"role": "user", "content": text}}


def reply(text: str, stop: str | None, ts: str, mid: str = "m1") -> dict[str, Any]:
    return {
        "type": "assistant",
        "timestamp": ts,
        "requestId": "r-" + mid,
        "message": {
            "id": mid,
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": stop,
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }


def feed(*records: Any) -> list[SessionItem]:
    parser = ClaudeParser()
    return [item for record in records for item in parser.feed(record)]


def test_turn_duration_after_end_turn_gives_one_turn_complete() -> None:
    items = feed(
        prompt("hi"),
        reply("hello", "end_turn", "2026-01-01T00:00:02.000Z"),
        {"type": "system", "subtype": "turn_duration", "durationMs": 2500},
    )
    turns = [i for i in items if i.type == "turn_complete"]
    assert len(turns) == 1 and turns[0].status == "ok" and turns[0].duration_ms == 2000


def test_unfinished_trailing_turn_emits_nothing_and_next_prompt_closes_it() -> None:
    tool = {
        "type": "assistant",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "id": "m2",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
            ],
        },
    }
    assert not any(i.type == "turn_complete" for i in feed(prompt("go"), tool))
    items = feed(prompt("go"), tool, prompt("again", "2026-01-01T00:00:05.000Z"))
    turns = [i for i in items if i.type == "turn_complete"]
    assert len(turns) == 1 and turns[0].status == "stopped"


def test_interrupt_marker_closes_the_turn_as_stopped() -> None:
    items = feed(prompt("go"), prompt("[Request interrupted by user]"))
    assert [i.type for i in items] == ["user", "system", "turn_complete"]
    assert items[2].status == "stopped"  # type: ignore[union-attr]


def test_compaction_unknown_records_and_api_errors() -> None:
    items = feed(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "compactMetadata": {"trigger": "auto", "preTokens": 1000},
        },
        {"type": "user", "isCompactSummary": True, "message": {"content": "Summary of before"}},
        {"type": "brand-new-record", "content": "hello"},
        {"type": "file-history-snapshot", "snapshot": {}},
        prompt("x"),
        {
            "type": "assistant",
            "isApiErrorMessage": True,
            "message": {
                "id": "e",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "API Error: 529"}],
            },
        },
    )
    systems = [(i.subtype, i.content) for i in items if i.type == "system"]  # type: ignore[union-attr]
    # One compaction, one row: the boundary's line with the summary inside.
    compacted = "Conversation compacted (auto, 1000 tokens before)\n\nSummary of before"
    assert systems[0] == ("compact", compacted)
    assert systems[1] == ("unknown", "brand-new-record: hello")
    assert systems[2] == ("api_error", "API Error: 529")


def test_secrets_are_redacted_before_items_exist() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    items = feed(
        prompt(f"use {token}"),
        {
            "type": "assistant",
            "message": {
                "id": "m",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t",
                        "name": "Bash",
                        "input": {"command": f"gh auth {token}"},
                    }
                ],
            },
        },
    )
    dumped = str([i.model_dump() for i in items])
    assert token not in dumped and "[REDACTED" in dumped


def test_one_line_summaries_per_tool() -> None:
    cases = {
        ("Bash", "execute"): ({"command": "ls -la\n  | head"}, "ls -la | head"),
        ("Read", "read"): ({"file_path": "/a/b.py"}, "/a/b.py"),
        ("Edit", "edit"): ({"file_path": "/a/b.py", "old_string": "x"}, "/a/b.py"),
        ("Write", "write"): ({"file_path": "/a/c.py", "content": "y"}, "/a/c.py"),
        ("Grep", "search"): ({"pattern": "TODO", "path": "src"}, "TODO in src"),
        ("Glob", "search"): ({"pattern": "**/*.md"}, "**/*.md"),
        ("WebFetch", "fetch"): ({"url": "https://example.com"}, "https://example.com"),
        ("WebSearch", "search"): ({"query": "aiohttp sse"}, "aiohttp sse"),
        ("Task", "task"): (
            {"description": "Explore", "subagent_type": "general"},
            "Explore (general)",
        ),
        ("AskUserQuestion", "ask"): ({"questions": [{"question": "Which one?"}]}, "Which one?"),
        ("mcp__github__get_issue", "mcp"): ({"number": 3}, '{"number":3}'),
    }
    for (name, kind), (tool_input, summary) in cases.items():
        assert tool_kind(name) == kind
        assert tool_summary(name, tool_input) == summary


def test_todowrite_is_a_plan_and_results_join_their_call() -> None:
    items = feed(
        prompt("plan"),
        {
            "type": "assistant",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {
                "id": "m",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "p",
                        "name": "TodoWrite",
                        "input": {"todos": [{"content": "a", "status": "in_progress"}]},
                    },
                    {"type": "tool_use", "id": "r", "name": "Read", "input": {"file_path": "/x"}},
                ],
            },
        },
        {
            "type": "user",
            "timestamp": "2026-01-01T00:00:01.250Z",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "p", "content": "ok"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "r",
                        "content": [{"type": "text", "text": "body"}],
                        "is_error": True,
                    },
                ]
            },
        },
    )
    assert [i.type for i in items] == ["user", "plan", "tool_use", "tool_result"]
    assert items[1].entries[0].status == "in_progress"  # type: ignore[union-attr]
    assert isinstance(items[2], ToolUseEvent)
    result = items[3]
    assert (result.name, result.is_error, result.duration_ms, result.output) == (
        "Read",
        True,
        250,
        "body",
    )  # type: ignore[union-attr]


def test_non_object_lines_are_counted() -> None:
    parser = ClaudeParser()
    assert parser.feed([1, 2]) == [] and parser.feed("x") == []
    assert parser.errors == 2


PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_images_become_chips_beside_the_text_in_prompts_and_tool_results() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1},
    }
    parser = ClaudeParser()
    ask = prompt("")
    ask["message"]["content"] = [image, {"type": "text", "text": "what is on this screenshot?"}]
    items = parser.feed(ask)
    user = items[-1]
    assert user.type == "user" and user.content == "what is on this screenshot?"
    assert [(a.media_type, a.size) for a in user.attachments] == [("image/png", 70)]
    call = reply("", "tool_use", "2026-01-01T00:00:01.000Z")
    call["message"]["content"] = [
        {
            "type": "tool_use",
            "id": "t1",
            "name": "mcp__playwright__browser_take_screenshot",
            "input": {},
        }
    ]
    parser.feed(call)
    result = {
        "type": "user",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "text", "text": "Took the screenshot"}, image,
            ]},
        ]},
    }  # fmt: skip
    (tool_result,) = [i for i in parser.feed(result) if i.type == "tool_result"]
    assert tool_result.output == "Took the screenshot"  # no "[image]" glued to the text
    assert [a.media_type for a in tool_result.attachments] == ["image/png"]
