"""Which Task call a sub-agent's records belong to (their `parent_tool_use_id`).

Sub-agent records are threads: in an agent file all carry its `agentId`; inline (older Claude
Code) they chain by `parentUuid` from a root prompt. A thread is linked to the Task call whose
`prompt` equals its root prompt (known as soon as it starts, so live items are linked at once),
or, when the Task finishes, to the call whose result names its `agentId`. Records of an agent
thread not yet linked are held (bounded) until that result; agent files no Task spawned (warm-up
agents) stay held and unshown.

A thread written inline in the session's own file that no Task can claim is never dropped: it
goes to an "unplaced" group of its own (`UNPLACED` + its key), shown as such. An inline thread
without `agentId` is unplaced at once (nothing can claim it later); one with an `agentId` when
the next real prompt comes and no Task result has named it.
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.models import SessionItem, ToolResultEvent, ToolUseEvent
from sidemirror.sources.claude.tools import has_tool_result
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import flatten_content

MAX_PENDING = 5000  # records held per unlinked thread
UNPLACED = "unplaced:"  # the parent id of a group of sub-agent records no Task claimed
UNPLACED_NAME = "Unplaced sub-agent"  # the name of that group's card


def unplaced_card(group: str, ts: str) -> list[SessionItem]:
    """The card an unplaced thread's items nest under: a call with its result, so it never
    shows as running."""
    note = "Sub-agent lines no Task call in this session claims"
    return [
        ToolUseEvent(ts=ts, tool_use_id=group, name=UNPLACED_NAME, kind="task", input=note),
        ToolResultEvent(ts=ts, tool_use_id=group, name=UNPLACED_NAME, output=note),
    ]


class SubagentLinker:
    def __init__(self) -> None:
        self._task_prompts: dict[str, str] = {}  # unclaimed Task calls: tool_use_id -> prompt
        self._open_tasks: set[str] = set()  # Task calls without a result yet
        self._links: dict[str, str] = {}  # thread key -> Task tool_use_id
        self._threads: dict[str, str] = {}  # inline record uuid -> thread key
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._inline_held: set[str] = set()  # held agent threads written in the main file

    def task_started(self, tool_id: str, prompt: str | None) -> None:
        self._open_tasks.add(tool_id)
        if prompt:
            self._task_prompts[tool_id] = prompt

    def task_finished(self, tool_id: str) -> None:
        # A sub-agent's first prompt comes before its Task's result, so a finished Task's
        # prompt can only claim a later thread by mistake (a later Task asked the same thing).
        # Dropping it also keeps a parse from a sync point in step (sync.py).
        self._open_tasks.discard(tool_id)
        self._task_prompts.pop(tool_id, None)

    def route(self, record: dict[str, Any], origin: str) -> str | None:
        """The Task a sub-agent record belongs to, or None after holding it until one is known."""
        key = self._thread_key(record, origin)
        parent = self._links.get(key) or self._link_by_prompt(key, record)
        # Only agent threads are held: `release` is their one way out. An inline thread links by
        # its prompt or never, so holding its records would keep them for the session's life.
        if parent is None and key.startswith("a:"):
            held = self._pending.setdefault(key, [])
            if len(held) < MAX_PENDING:
                held.append(record)
            if not origin:  # the session's own file (positions.MAIN)
                self._inline_held.add(key)
        elif parent is None and not origin:
            parent = self._link(key, UNPLACED + key[2:])
        return parent

    def unplaced(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """A real prompt came: inline agent threads no Task result named are unplaced; their
        group ids and the records held."""
        found = []
        for key in sorted(self._inline_held):
            if key in self._pending and key not in self._links:
                found.append((self._link(key, UNPLACED + key[2:]), self._pending.pop(key)))
        self._inline_held.clear()
        return found

    def release(self, agent_id: str, tool_id: str) -> list[dict[str, Any]]:
        """The Task `tool_id` reports it ran `agent_id`: link it; returns the records held."""
        key = f"a:{agent_id}"
        if key in self._links:
            return []
        self._link(key, tool_id)
        return self._pending.pop(key, [])

    def _thread_key(self, record: dict[str, Any], origin: str) -> str:
        agent = _text(record.get("agentId")) or origin
        uuid = _text(record.get("uuid"))
        if agent:
            key = f"a:{agent}"
        else:
            key = self._threads.get(_text(record.get("parentUuid")), f"u:{uuid}")
        if uuid:
            self._threads[uuid] = key
        return key

    def _link_by_prompt(self, key: str, record: dict[str, Any]) -> str | None:
        if record.get("type") != "user":
            return None
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        prompt = "" if has_tool_result(content) else flatten_content(content).strip()
        if not prompt:
            return None
        for tool_id, task_prompt in self._task_prompts.items():
            if prompt == task_prompt.strip():
                return self._link(key, tool_id)
        if key.startswith("u:") and len(self._open_tasks) == 1:
            # An inline sub-agent whose prompt was rewritten: the one running Task spawned it.
            return self._link(key, next(iter(self._open_tasks)))
        return None

    def _link(self, key: str, tool_id: str) -> str:
        self._links[key] = tool_id
        self._task_prompts.pop(tool_id, None)
        return tool_id
