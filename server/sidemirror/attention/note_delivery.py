"""Where a hook event can carry the session's queued notes, and what the hook prints for them.

Claude Code's hooks reference documents both outputs:
- `PostToolUse`: `hookSpecificOutput.additionalContext`, context added for Claude after the tool
  call it just made;
- `Stop`: `{"decision": "block", "reason": ...}`: Claude does not stop, and reads the reason as
  what to do next. A note is consumed once, so the turn it continues ends normally next time
  (no loop through `stop_hook_active`).
Every other event carries nothing; a `SessionEnd` drops what waits (notes.py). Nor does a
tool call made inside a sub-agent (its event names the sub-agent's `agent_id`): the context
would reach the sub-agent, not the agent the user talks to; the note waits for the main one.
"""

from __future__ import annotations

from typing import Any

from sidemirror.attention.notes import Note

CARRIERS = {"PostToolUse": "after a tool call", "Stop": "at the end of the turn"}
PREFIX = "A note from the user, sent from the Sidemirror side panel while you worked:"


def note_text(notes: list[Note]) -> str:
    return "\n\n".join(f"{PREFIX}\n\n{note.text}" for note in notes)


def hook_output(event_name: str, notes: list[Note]) -> dict[str, Any]:
    text = note_text(notes)
    if event_name == "Stop":
        return {"decision": "block", "reason": text}
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def in_subagent(payload: dict[str, Any]) -> bool:
    """Whether the event comes from inside a sub-agent (Claude Code names it `agent_id`)."""
    agent = payload.get("agent_id")
    return isinstance(agent, str) and bool(agent)
