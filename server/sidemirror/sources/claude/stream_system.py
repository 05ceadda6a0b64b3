"""stream-json's `system` records, `tool_progress`, and a result's permission denials.

Shapes from the Claude Agent SDK's published message types (`SDKStatusMessage`,
`SDKTaskStartedMessage`, `SDKTaskUpdatedMessage`, `SDKTaskProgressMessage`,
`SDKTaskNotificationMessage`, `SDKToolProgressMessage`, `SDKPermissionDenial`):
- background work and sub-agents (`task_*`) name the tool call that started them
  (`tool_use_id`, on the first record at least), so their lines nest under that call's card;
- progress (`task_progress`, `tool_progress`) goes out live, like partial text;
- `status` is mostly the spinner (`requesting`), which says nothing a reader needs; a mode change,
  a compaction starting, and a compaction failing do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import ErrorEvent, SessionItem, SystemEvent, ToolProgressEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json
from sidemirror.sources.tool_names import tool_summary

# Task statuses that end a task, and how a line says it.
_ENDED = {"completed": "finished", "failed": "failed", "stopped": "stopped", "killed": "stopped"}
_STATES = {"running": "running", "requires_action": "waiting", "idle": "idle"}


def _seconds_ms(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return round(value * 1000)
    return None


@dataclass
class SystemRecords:
    """What the `system` records of one run said: the tasks (and their tool calls), the mode."""

    tasks: dict[str, str] = field(default_factory=dict)  # task id → the tool call it runs under
    task_names: dict[str, str] = field(default_factory=dict)
    mode: str | None = None

    def record(self, record: dict[str, Any]) -> tuple[list[SessionItem], str | None]:
        """Items and a session state for one `system` record other than `init`; ([], None) for
        a subtype this module does not own (the caller shows it generically)."""
        subtype = _text(record.get("subtype"))
        ts = now_iso()
        if subtype == "status":
            return self._status(record, ts), "running"
        if subtype == "session_state_changed":
            return [], _STATES.get(_text(record.get("state")))
        if subtype in ("task_started", "task_updated", "task_notification"):
            item = self._task(subtype, record, ts)
            return ([item] if item is not None else []), None
        if subtype == "task_progress":
            return self._task_progress(record, ts), None
        return [], None

    def owns(self, subtype: str) -> bool:
        return subtype in (
            "status",
            "session_state_changed",
            "task_started",
            "task_updated",
            "task_progress",
            "task_notification",
            "thinking_tokens",  # a running estimate while reasoning: the thinking shows itself
        )

    def _status(self, record: dict[str, Any], ts: str) -> list[SessionItem]:
        items: list[SessionItem] = []
        mode = _text(record.get("permissionMode"))
        if mode and self.mode is not None and mode != self.mode:
            items.append(SystemEvent(ts=ts, subtype="mode", content=redact_text(f"Mode: {mode}")))
        self.mode = mode or self.mode
        if record.get("status") == "compacting":
            items.append(
                SystemEvent(ts=ts, subtype="status", content="Compacting the conversation")
            )
        if record.get("compact_result") == "failed":
            error = _text(record.get("compact_error")) or "unknown error"
            items.append(ErrorEvent(ts=ts, message=redact_text(f"Compaction failed: {error}")))
        return items

    def _task(self, subtype: str, record: dict[str, Any], ts: str) -> SessionItem | None:
        task = _text(record.get("task_id"))
        parent = _text(record.get("tool_use_id")) or self.tasks.get(task) or None
        if parent:
            self.tasks[task] = parent
        if subtype == "task_started":
            name = _text(record.get("description")) or _text(record.get("subagent_type")) or task
            self.task_names[task] = name
            kind = "Sub-agent" if record.get("task_type") == "local_agent" else "Task"
            where = " in the background" if record.get("is_backgrounded") is True else ""
            text = f"{kind} started{where}: {name}"
        else:
            status = _text(record.get("status"))
            patch = _dict(record.get("patch"))
            status = status or _text(patch.get("status"))
            if status not in _ENDED:
                return None  # pending/running/paused: the card's spinner says it
            name = self.task_names.get(task) or _text(patch.get("description")) or task
            detail = _text(record.get("summary")) or _text(patch.get("error"))
            text = f"Task {_ENDED[status]}: {name}" + (f"\n{detail}" if detail else "")
        return SystemEvent(
            ts=ts, parent_tool_use_id=parent, subtype="task", content=redact_text(text)
        )

    def _task_progress(self, record: dict[str, Any], ts: str) -> list[SessionItem]:
        task = _text(record.get("task_id"))
        parent = _text(record.get("tool_use_id")) or self.tasks.get(task)
        if not parent:
            return []
        usage = _dict(record.get("usage"))
        elapsed = usage.get("duration_ms")
        return [
            ToolProgressEvent(
                ts=ts,
                tool_use_id=parent,
                name="",  # the task's own tool: its card knows its name
                elapsed_ms=elapsed if isinstance(elapsed, int) and elapsed >= 0 else None,
            )
        ]


def tool_progress(record: dict[str, Any]) -> list[SessionItem]:
    """`tool_progress`: a running tool's heartbeat, live only."""
    tool_id = _text(record.get("tool_use_id"))
    if not tool_id:
        return []
    return [
        ToolProgressEvent(
            ts=now_iso(),
            parent_tool_use_id=_text(record.get("parent_tool_use_id")) or None,
            tool_use_id=tool_id,
            name=_text(record.get("tool_name")),
            elapsed_ms=_seconds_ms(record.get("elapsed_time_seconds")),
        )
    ]


def permission_denials(result: dict[str, Any]) -> list[SessionItem]:
    """A result's `permission_denials`: one line naming each tool call that was refused."""
    denied = []
    for denial in _list(result.get("permission_denials")):
        denial = _dict(denial)
        name = _text(denial.get("tool_name")) or "tool"
        tool_input = denial.get("tool_input")
        summary = tool_summary(name, tool_input) if tool_input else ""
        denied.append(f"{name} ({summary})" if summary else name)
    if not denied:
        return []
    text = "Permission denied: " + ", ".join(denied)
    return [SystemEvent(ts=now_iso(), subtype="permission_denied", content=redact_text(text))]


def generic_system(record: dict[str, Any]) -> str:
    rest = {k: v for k, v in record.items() if k not in ("type", "subtype", "uuid")}
    return compact_json(rest)
