"""What a Claude Code hook event says about its session's state.

The events and their fields follow Claude Code's hooks reference
(https://code.claude.com/docs/en/hooks); recorded examples are in tests/fixtures/hooks/.
Every event carries `session_id`, `transcript_path`, `cwd` and `hook_event_name`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A hook's strings are cut this far before anything else reads them: well past the caps the
# board shows (attention/board.py), so a secret across a cap is still whole for the redactor,
# yet a megabyte `cwd` costs neither memory nor time past its parse.
RAW_MAX_CHARS = 64 * 1024

# Notification types that mean the agent waits for the user, and for what.
_WAITING_NOTIFICATIONS = {
    "permission_prompt": "permission",
    "idle_prompt": "input",
    "elicitation_dialog": "input",
}
# Tools through which the agent asks the user a question and waits for the answer.
_ASKING_TOOLS = frozenset({"AskUserQuestion"})
_RUNNING_EVENTS = frozenset(
    {
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
    }
)


@dataclass(frozen=True)
class HookEvent:
    name: str
    session_id: str
    cwd: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class StateSignal:
    state: str
    reason: str | None = None


def parse_event(payload: object) -> HookEvent:
    """The fields every event carries; ValueError (with what is wrong) otherwise."""
    if not isinstance(payload, dict):
        raise ValueError("a hook event is a JSON object")
    fields = {}
    for key in ("hook_event_name", "session_id", "cwd"):
        value = payload.get(key)
        if not isinstance(value, str) or not value:
            raise ValueError(f"the hook event has no {key!r}")
        fields[key] = value[:RAW_MAX_CHARS]
    return HookEvent(fields["hook_event_name"], fields["session_id"], fields["cwd"], payload)


def signal_of(event: HookEvent) -> StateSignal | None:
    """The state the event puts its session in; None when it says nothing about it."""
    name, payload = event.name, event.payload
    if name == "SessionStart" or name == "Stop":
        return StateSignal("idle")
    if name == "SessionEnd":
        reason = payload.get("reason")
        return StateSignal("ended", reason if isinstance(reason, str) and reason else None)
    if name == "PermissionRequest":
        return StateSignal("waiting", "permission")
    if name == "PreToolUse":
        asking = payload.get("tool_name") in _ASKING_TOOLS
        return StateSignal("waiting", "input") if asking else StateSignal("running")
    if name == "Notification":
        reason = _WAITING_NOTIFICATIONS.get(str(payload.get("notification_type")))
        return StateSignal("waiting", reason) if reason else None
    if name in _RUNNING_EVENTS:
        return StateSignal("running")
    return None
