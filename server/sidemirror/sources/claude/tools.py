"""Claude Code tool calls in a human line: which kind of tool it is, and what it was asked to do.

Side-panel readers scan a session by its tool calls, so each gets a one-line summary of its one
meaningful argument (the command, the path, the pattern, the URL) rather than its raw JSON.
Tools we do not know fall back to compact JSON: drift in tool inputs never loses information.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from sidemirror.core.models import (
    ErrorEvent,
    PlanEntry,
    PlanEvent,
    SessionItem,
    ThinkingEvent,
    ToolKind,
    ToolResultEvent,
    ToolUseEvent,
)
from sidemirror.core.redact import redact_text
from sidemirror.sources.common import as_text as _text

_KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "NotebookRead": "read",
    "LS": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Write": "write",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillBash": "execute",
    "KillShell": "execute",
    "Grep": "search",
    "Glob": "search",
    "WebSearch": "search",
    "WebFetch": "fetch",
    "Task": "task",
    "Agent": "task",  # newer Claude Code names the sub-agent tool `Agent`
    "TodoWrite": "plan",
    "ExitPlanMode": "plan",
    "AskUserQuestion": "ask",
}

# The tools whose calls spawn a sub-agent (its lines are linked to the call).
TASK_TOOLS = frozenset({"Task", "Agent"})

# The input field that best says what a tool was asked to do, in order of preference.
_SUMMARY_FIELDS: dict[str, tuple[str, ...]] = {
    "Bash": ("command",),
    "Read": ("file_path",),
    "NotebookRead": ("notebook_path",),
    "LS": ("path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Write": ("file_path",),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "BashOutput": ("bash_id", "shell_id"),
    "KillBash": ("shell_id", "bash_id"),
    "KillShell": ("shell_id", "bash_id"),
    "ExitPlanMode": ("plan",),
    "SlashCommand": ("command",),
    "Skill": ("skill", "command"),
}


def tool_kind(name: str) -> ToolKind:
    if name.startswith("mcp__"):
        return "mcp"
    return _KINDS.get(name, "other")


def one_line(text: str) -> str:
    """Collapse whitespace runs (newlines included) so a summary is one readable line."""
    return " ".join(text.split())


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def tool_summary(name: str, tool_input: Any) -> str:
    """The one-line input summary shown for a tool call."""
    if not isinstance(tool_input, dict):
        return one_line(compact_json(tool_input))
    for key in _SUMMARY_FIELDS.get(name, ()):
        value = _text(tool_input.get(key))
        if value:
            return one_line(value)
    if name in ("Grep", "Glob"):
        pattern = _text(tool_input.get("pattern"))
        where = _text(tool_input.get("path"))
        return one_line(f"{pattern} in {where}" if where else pattern)
    if name in TASK_TOOLS:
        description = _text(tool_input.get("description")) or _text(tool_input.get("prompt"))
        agent = _text(tool_input.get("subagent_type"))
        return one_line(f"{description} ({agent})" if agent else description)
    if name == "AskUserQuestion":
        questions = tool_input.get("questions")
        if isinstance(questions, list):
            asked = [_text(q.get("question")) for q in questions if isinstance(q, dict)]
            if any(asked):
                return one_line(" / ".join(q for q in asked if q))
        return one_line(_text(tool_input.get("question")) or compact_json(tool_input))
    return one_line(compact_json(tool_input))


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


def flatten_content(content: Any) -> str:
    """Text of a message or tool_result `content`: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else compact_json(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(_text(block.get("text")))
            elif kind == "image":
                parts.append("[image]")
            elif kind == "tool_reference":
                parts.append(_text(block.get("tool_name")))
            else:
                parts.append(compact_json(block))
    return "\n".join(p for p in parts if p)


def has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


UserKind = Literal["tool_results", "meta", "compact", "interrupted", "local_command", "prompt"]


def user_kind(record: dict[str, Any]) -> tuple[UserKind, str]:
    """What a `user` line is, and its flattened text (empty for tool results). Only `prompt`
    opens a turn; the parser and the sync-point scan (claude_sync.py) both decide by this."""
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
    if stripped.startswith(("<local-command-", "<bash-")):
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
