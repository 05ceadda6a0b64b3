"""Tool calls in a human line: which kind of tool it is, and what it was asked to do.

The names are Claude Code's. They are shared ground, not Claude's alone: ACP agents built on
Claude Code (claude-agent-acp) report the same tool names, so both adapters read them here.
Side-panel readers scan a session by its tool calls, so each gets a one-line summary of its one
meaningful argument (the command, the path, the pattern, the URL) rather than its raw JSON.
Tools we do not know fall back to compact JSON: drift in tool inputs never loses information.
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.models import ToolKind
from sidemirror.core.typed import hide_typed_values
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, one_line

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


def tool_summary(name: str, tool_input: Any) -> str:
    """The one-line input summary shown for a tool call (values a browser tool types into a
    page, such as `browser_type` text or `browser_fill_form` field values, never show)."""
    tool_input = hide_typed_values(name, tool_input)
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
