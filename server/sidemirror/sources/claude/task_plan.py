"""Claude Code's task tools (TaskCreate/TaskUpdate/TaskList/TaskGet) as the session's plan.

Claude Code ≥ 2.1.142 tracks its to-do list with these four tools instead of TodoWrite. TodoWrite
sends the whole list on each call; the task tools send one change at a time, so the list is kept
here and the whole current list is emitted as a `plan` item after each change: the panel shows
the same plan card either way.

Shapes (Claude Code's published tool schemas; see tests/fixtures/NOTICE.md):
- TaskCreate `{subject, description, activeForm?, metadata?}`; its result names the new id:
  `toolUseResult.task.id` (stream-json: `tool_use_result`), text "Task #3 created successfully…".
- TaskUpdate `{taskId, status?, subject?, …}`; status `pending|in_progress|completed`, or
  `deleted`, which removes the task.
- TaskList / TaskGet read the list: no item of their own, but a structured TaskList result
  (`{tasks: [{id, subject, status}]}`) is the whole list, so it corrects ours. That is what keeps
  the plan right when the tasks were created before the part of the transcript we read (a parse
  from a sync point, or a resumed session whose list lives in `~/.claude/tasks/`).

A change is applied when the call is seen (the plan updates live, as TodoWrite's does); a call
whose result is an error is undone and the error shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from sidemirror.core.models import ErrorEvent, PlanEntry, PlanEvent, SessionItem
from sidemirror.core.redact import redact_text
from sidemirror.sources.common import as_dict, as_list
from sidemirror.sources.common import as_text as _text

TASK_PLAN_TOOLS = frozenset({"TaskCreate", "TaskUpdate", "TaskList", "TaskGet"})
_CREATED_ID = re.compile(r"Task #(\w+) created")
_STATUSES = frozenset({"pending", "in_progress", "completed"})


@dataclass
class _Task:
    id: str | None  # None until the TaskCreate result names it
    subject: str
    status: str = "pending"


def _task_id(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    return str(value) if isinstance(value, (str, int)) else ""


class TaskPlan:
    """One agent thread's task list (the main thread's, or one sub-agent's: each numbers its
    tasks from 1, so they are kept apart by the caller)."""

    def __init__(self) -> None:
        self._tasks: list[_Task] = []
        self._created: dict[str, _Task] = {}  # TaskCreate tool_use_id -> its task, until bound
        self._before: dict[str, list[_Task]] = {}  # TaskUpdate tool_use_id -> list before it

    def call(
        self, tool_id: str, name: str, tool_input: Any, ts: str, parent: str | None
    ) -> list[SessionItem]:
        args = as_dict(tool_input)
        if name == "TaskCreate":
            subject = _text(args.get("subject")) or _text(args.get("activeForm"))
            task = _Task(None, subject)
            self._tasks.append(task)
            self._created[tool_id] = task
            return [self._plan(ts, parent)]
        if name != "TaskUpdate":
            return []  # TaskList / TaskGet only read
        task_id = _task_id(args.get("taskId"))
        if not task_id:
            return []
        self._before[tool_id] = [replace(t) for t in self._tasks]
        task = self._find(task_id) or self._known_by_id(task_id, _text(args.get("subject")))
        status = _text(args.get("status"))
        if status == "deleted":
            self._tasks.remove(task)
        elif status:
            task.status = status
        subject = _text(args.get("subject"))
        task.subject = subject or task.subject
        return [self._plan(ts, parent)]

    def result(
        self,
        tool_id: str,
        name: str,
        structured: Any,
        output: str,
        is_error: bool,
        ts: str,
        parent: str | None,
    ) -> list[SessionItem]:
        """The call's result: `structured` is the record's toolUseResult, `output` its text
        (already redacted)."""
        if is_error:
            return self._undo(tool_id, ts, parent) + [
                ErrorEvent(ts=ts, parent_tool_use_id=parent, message=output)
            ]
        data = as_dict(structured)
        if name == "TaskCreate":
            task = self._created.pop(tool_id, None)
            if task is not None:
                found = _CREATED_ID.search(output)
                bound = _task_id(as_dict(data.get("task")).get("id"))
                task.id = bound or (found.group(1) if found else None)
            return []
        self._before.pop(tool_id, None)
        if name == "TaskList" and isinstance(data.get("tasks"), list):
            return self._resync(as_list(data.get("tasks")), ts, parent)
        if name == "TaskGet":
            got = as_dict(data.get("task"))
            task = self._find(_task_id(got.get("id")))
            status = _text(got.get("status"))
            if task is not None and status in _STATUSES and status != task.status:
                task.status = status
                return [self._plan(ts, parent)]
        return []

    # --- helpers ---

    def _find(self, task_id: str) -> _Task | None:
        return next((t for t in self._tasks if task_id and t.id == task_id), None)

    def _known_by_id(self, task_id: str, subject: str) -> _Task:
        """A task created before the part we read: known by its id until a TaskList names it."""
        task = _Task(task_id, subject or f"Task #{task_id}")
        self._tasks.append(task)
        return task

    def _undo(self, tool_id: str, ts: str, parent: str | None) -> list[SessionItem]:
        created = self._created.pop(tool_id, None)
        if created is not None and created in self._tasks:
            self._tasks.remove(created)
            return [self._plan(ts, parent)]
        before = self._before.pop(tool_id, None)
        if before is not None:
            self._tasks = before
            return [self._plan(ts, parent)]
        return []

    def _resync(self, listed: list[Any], ts: str, parent: str | None) -> list[SessionItem]:
        tasks = []
        for raw in listed:
            entry = as_dict(raw)
            task_id = _task_id(entry.get("id"))
            if not task_id:
                continue
            status = _text(entry.get("status"))
            tasks.append(_Task(task_id, _text(entry.get("subject")), status or "pending"))
        unbound = [t for t in self._tasks if t.id is None]  # created, result not yet seen
        if tasks + unbound == self._tasks:
            return []
        self._tasks = tasks + unbound
        return [self._plan(ts, parent)]

    def _plan(self, ts: str, parent: str | None) -> PlanEvent:
        entries = [PlanEntry(content=redact_text(t.subject), status=t.status) for t in self._tasks]
        return PlanEvent(ts=ts, parent_tool_use_id=parent, entries=entries)


class TaskPlans:
    """The task list of each thread in one session, by the sub-agent call that owns it."""

    def __init__(self) -> None:
        self._plans: dict[str | None, TaskPlan] = {}

    def of(self, parent: str | None) -> TaskPlan:
        return self._plans.setdefault(parent, TaskPlan())
