"""Codex tool calls → `tool_use`, `tool_result` and `plan` items (pure; the parser keeps turns).

A call is a `function_call`, `custom_tool_call`, `local_shell_call` or `web_search_call` item;
its result a `function_call_output` / `custom_tool_call_output` item with the same `call_id`, or,
for a command, its `exec_command_end` event (codex/commands.py says which wins).
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import PlanEvent, SessionItem, ToolResultEvent, ToolUseEvent
from sidemirror.core.recent import CALLS_REMEMBERED, RecentDict
from sidemirror.core.redact import redact_text
from sidemirror.sources.codex.commands import (
    CommandResults,
    end_duration_ms,
    end_output,
    exited_with,
    running_session,
)
from sidemirror.sources.codex.tools import (
    kind_of,
    output_text,
    parse_arguments,
    patch_file_diffs,
    plan_entries,
    summary,
    tool_name,
)
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text


def _result(
    ts: str, call_id: str, name: str, text: str, failed: bool, duration: int | None
) -> ToolResultEvent:
    return ToolResultEvent(
        ts=ts,
        tool_use_id=call_id,
        name=name,
        output=redact_text(text),
        is_error=failed,
        duration_ms=duration,
    )


class ToolCalls:
    def __init__(self) -> None:
        # call_id -> (name, ts), of the latest calls only: a call's output and end come soon
        # after it (core/recent.py).
        self.names: RecentDict[str, tuple[str, str]] = RecentDict(CALLS_REMEMBERED)
        # A write_stdin call -> the process session it writes to.
        self.polls: RecentDict[str, str] = RecentDict(CALLS_REMEMBERED)
        self.results = CommandResults()
        self._web = 0

    def call(self, p: dict[str, Any], ts: str) -> tuple[list[SessionItem], str | None]:
        """The items of a call, and its id when its result is still to come."""
        kind = p.get("type")
        call_id = _text(p.get("call_id")) or _text(p.get("id"))
        if kind == "web_search_call":
            action = _dict(p.get("action"))
            self._web += 1
            call_id = call_id or f"web_search_{self._web}"
            use = ToolUseEvent(
                ts=ts,
                tool_use_id=call_id,
                name="web_search",
                kind="fetch",
                input=redact_text(summary("web_search", action)),
            )
            done = ToolResultEvent(
                ts=ts, tool_use_id=call_id, name="web_search", output=_text(p.get("status"))
            )
            return [use, done], None
        args: Any
        if kind == "local_shell_call":
            name, args = "local_shell", _dict(p.get("action"))
        elif kind == "custom_tool_call":
            name, args = tool_name(p), p.get("input")
        else:
            name, args = tool_name(p), parse_arguments(p.get("arguments"))
        if not call_id or call_id in self.names:
            return [], None
        self.names[call_id] = (name, ts)
        if name == "write_stdin" and isinstance(args, dict):
            self.polls[call_id] = str(args.get("session_id"))
        if name == "update_plan":
            entries = plan_entries(args)
            for entry in entries:
                entry.content = redact_text(entry.content)
            return [PlanEvent(ts=ts, entries=entries)], None
        diffs = patch_file_diffs(name, args)
        use = ToolUseEvent(
            ts=ts,
            tool_use_id=call_id,
            name=name,
            kind=kind_of(name),
            input=redact_text(summary(name, args)),
            diff=diffs[0] if diffs else None,
            diffs=diffs if len(diffs) > 1 else None,  # a patch of several files
        )
        return [use], call_id

    def output(self, p: dict[str, Any], ts: str) -> tuple[str, list[SessionItem]]:
        """A call's output item: its result, unless it says a command is still running."""
        call_id = _text(p.get("call_id"))
        name, started = self.names.get(call_id, ("", ""))
        if name == "update_plan":
            return call_id, []  # the plan item stands for the call
        raw = p.get("output")
        text, is_error, duration = output_text(raw)
        if duration is None and started and ts:
            duration = ms_between(started, ts)
        result = _result(ts, call_id, name, text, is_error, duration)
        head = raw if isinstance(raw, str) else ""
        if name == "write_stdin":
            # What it read meanwhile is its own whole result, and more of the command's output.
            session = self.polls.get(call_id, "")
            polled = self.results.polled(session, result.output, exited_with(head), ts)
            return call_id, [result, *polled]
        return call_id, [*self.results.output(result, running_session(head), started)]

    def ended(self, p: dict[str, Any], ts: str) -> tuple[str, list[SessionItem]]:
        """`exec_command_end`: the command's whole output, exit code and duration."""
        call_id = _text(p.get("call_id"))
        if not call_id:
            return call_id, []
        items: list[SessionItem] = []
        name = self.names.get(call_id, ("", ""))[0]
        if not name:  # a command the model did not call (the user's `!cmd`): a card of its own
            name = "exec_command"
            self.names[call_id] = (name, ts)
            command = redact_text(summary(name, {"command": p.get("command")}))
            items.append(
                ToolUseEvent(ts=ts, tool_use_id=call_id, name=name, kind="execute", input=command)
            )
        output, failed = end_output(p)
        result = _result(ts, call_id, name, output, failed, end_duration_ms(p))
        return call_id, items + [*self.results.ended(result)]
