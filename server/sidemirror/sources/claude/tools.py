"""Claude Code records as canonical items: user-line kinds, plans, thinking, tool calls and results.

Tool names, kinds and one-line summaries are shared with ACP (sources/tool_names.py).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from sidemirror.core.models import (
    ErrorEvent,
    PlanEntry,
    PlanEvent,
    SessionItem,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
)
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.local_commands import is_local_command
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import flatten_content
from sidemirror.sources.diffs import claude_tool_diff
from sidemirror.sources.tool_names import tool_kind, tool_summary


def plan_entries(tool_input: Any) -> list[PlanEntry]:
    """TodoWrite's `todos` as plan entries (unknown statuses pass through as given)."""
    todos = tool_input.get("todos") if isinstance(tool_input, dict) else None
    entries: list[PlanEntry] = []
    for todo in todos if isinstance(todos, list) else []:
        if not isinstance(todo, dict):
            continue
        content = _text(todo.get("content")) or _text(todo.get("activeForm"))
        entries.append(
            PlanEntry(
                content=content,
                status=_text(todo.get("status")) or "pending",
                priority=_text(todo.get("priority")) or "medium",
            )
        )
    return entries


def has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


UserKind = Literal["tool_results", "meta", "compact", "interrupted", "local_command", "prompt"]


def user_kind(record: dict[str, Any]) -> tuple[UserKind, str]:
    """What a `user` line is, and its flattened text (empty for tool results). Only `prompt`
    opens a turn; the parser and the sync-point scan (sync.py) both decide by this."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and has_tool_result(content):
        return "tool_results", ""
    if record.get("isMeta") is True:
        return "meta", ""  # injected context (slash-command bodies, caveats), not typed
    text = flatten_content(content)
    if record.get("isCompactSummary") is True:
        return "compact", text
    stripped = text.lstrip()
    if stripped.startswith("[Request interrupted by user"):
        return "interrupted", text
    if stripped.startswith(("<local-command-", "<bash-")) or is_local_command(text):
        return "local_command", text
    return "prompt", text


def strip_tags(text: str) -> str:
    return re.sub(r"</?[a-z-]+>", "", text).strip()


def slash_command(text: str) -> str:
    """`<command-name>/x</command-name><command-args>y</command-args>` as the user typed it."""
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    shown = (name.group(1).strip() if name else "") + " " + (args.group(1).strip() if args else "")
    return shown.strip() or strip_tags(text)


def thinking_item(block: dict[str, Any], ts: str, parent: str | None) -> list[SessionItem]:
    """A `thinking` content block; redacted or signature-only reasoning has nothing to show."""
    thought = _text(block.get("thinking"))
    if not thought.strip():
        return []
    return [ThinkingEvent(ts=ts, parent_tool_use_id=parent, content=redact_text(thought))]


def tool_call_item(
    tool_id: str, name: str, tool_input: Any, ts: str, parent: str | None
) -> SessionItem:
    """A `tool_use` content block (transcripts and stream-json alike); TodoWrite is the plan."""
    if name == "TodoWrite":
        entries = plan_entries(tool_input)
        for entry in entries:
            entry.content = redact_text(entry.content)
        return PlanEvent(ts=ts, parent_tool_use_id=parent, entries=entries)
    return ToolUseEvent(
        ts=ts,
        parent_tool_use_id=parent,
        tool_use_id=tool_id,
        name=name,
        kind=tool_kind(name),
        input=redact_text(tool_summary(name, tool_input)),
        diff=claude_tool_diff(name, tool_input),
    )


def tool_result_item(
    tool_id: str,
    name: str,
    output: str,
    is_error: bool,
    ts: str,
    parent: str | None,
    duration_ms: int | None = None,
) -> SessionItem | None:
    """A `tool_result` block (already redacted). TodoWrite's plan item stands for its call, so
    only a failed TodoWrite says anything (an error); its routine result gives nothing."""
    if name == "TodoWrite":
        return ErrorEvent(ts=ts, parent_tool_use_id=parent, message=output) if is_error else None
    return ToolResultEvent(
        ts=ts,
        parent_tool_use_id=parent,
        tool_use_id=tool_id,
        name=name,
        output=output,
        is_error=is_error,
        duration_ms=duration_ms,
    )
