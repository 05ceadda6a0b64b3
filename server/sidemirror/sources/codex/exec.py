"""Pushed Codex data: `codex exec --json` events, and whole rollout files (found by `auto`).

`codex exec --json` prints thread events: `thread.started` (`thread_id`: the session),
`turn.started`, `item.started` / `item.updated` / `item.completed` (agent_message, reasoning,
command_execution, file_change, mcp_tool_call, web_search, todo_list, error),
`turn.completed` (`usage`) or `turn.failed`, and a fatal `error`. Lines carry no timestamps.
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.clock import ms_between, now_iso
from sidemirror.core.models import (
    AssistantEvent,
    ErrorEvent,
    PlanEntry,
    PlanEvent,
    SessionItem,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
    TurnCompleteEvent,
    TurnStatus,
)
from sidemirror.core.redact import redact_text
from sidemirror.core.typed import hide_typed_values
from sidemirror.sources.base import Emitted
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, one_line


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class CodexExecConverter:
    agent = "codex"

    def __init__(self, default_session: str) -> None:
        self.session = default_session
        self.run_status: str | None = None
        self.turns = 0
        self.turn_open: str | None = None  # ts the open turn started
        self.shown: set[str] = set()  # item ids whose tool_use is out

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        kind = _text(record.get("type"))
        ts = now_iso()
        items: list[SessionItem] = []
        if kind == "thread.started":
            self.session = _text(record.get("thread_id")) or self.session
            return [Emitted(self.session, state="running")]
        if kind == "turn.started":
            self._open(ts)
        elif kind.startswith("item."):
            self._open(ts)
            items = self._item(kind, _dict(record.get("item")), ts)
        elif kind == "turn.completed":
            items = self._close("ok", _dict(record.get("usage")), ts)
        elif kind == "turn.failed":
            message = _text(_dict(record.get("error")).get("message")) or "turn failed"
            items = [ErrorEvent(ts=ts, message=redact_text(message))]
            items += self._close("failed", {}, ts)
        elif kind == "error":
            self.run_status = "failed"
            items = [ErrorEvent(ts=ts, message=redact_text(_text(record.get("message"))))]
        out = [Emitted(self.session, item) for item in items]
        if kind in ("turn.completed", "turn.failed"):
            out.append(Emitted(self.session, state="idle"))
        return out

    def finish(self) -> list[Emitted]:
        if self.turn_open is not None:
            return [Emitted(self.session, i) for i in self._close("stopped", {}, now_iso())]
        return []

    def _open(self, ts: str) -> None:
        if self.turn_open is None:
            self.turns += 1
            self.turn_open = ts

    def _close(self, status: TurnStatus, usage: dict[str, Any], ts: str) -> list[SessionItem]:
        if self.turn_open is None:
            self._open(ts)
        started, self.turn_open = self.turn_open, None
        if status == "failed" or self.run_status != "failed":
            self.run_status = "failed" if status != "ok" else "ok"
        cached = _count(usage.get("cached_input_tokens"))
        return [
            TurnCompleteEvent(
                ts=ts,
                turn=self.turns,
                input_tokens=max(0, _count(usage.get("input_tokens")) - cached),
                output_tokens=_count(usage.get("output_tokens")),
                cache_read_tokens=cached,
                duration_ms=None if started is None else ms_between(started, ts),
                status=status,
            )
        ]

    def _use(self, item_id: str, name: str, kind: Any, summary: str, ts: str) -> list[SessionItem]:
        if item_id in self.shown:
            return []
        self.shown.add(item_id)
        event = ToolUseEvent(
            ts=ts, tool_use_id=item_id, name=name, kind=kind, input=redact_text(one_line(summary))
        )
        return [event]

    def _item(self, event: str, item: dict[str, Any], ts: str) -> list[SessionItem]:
        kind, item_id = _text(item.get("type")), _text(item.get("id"))
        done = event == "item.completed"
        if kind == "todo_list":
            entries = [
                PlanEntry(
                    content=redact_text(_text(e.get("text"))),
                    status="completed" if e.get("completed") is True else "pending",
                )
                for e in _list(item.get("items"))
                if isinstance(e, dict)
            ]
            return [PlanEvent(ts=ts, entries=entries)]
        if kind == "command_execution":
            items = self._use(item_id, "exec_command", "execute", _text(item.get("command")), ts)
            if done:
                code = item.get("exit_code")
                failed = item.get("status") in ("failed", "declined") or (
                    isinstance(code, int) and code != 0
                )
                output = redact_text(_text(item.get("aggregated_output")))
                items.append(self._result(item_id, "exec_command", output, failed, ts))
            return items
        if kind == "mcp_tool_call":
            name = f"mcp__{_text(item.get('server'))}__{_text(item.get('tool'))}"
            args = hide_typed_values(name, item.get("arguments"))
            items = self._use(item_id, name, "mcp", compact_json(args) if args else "", ts)
            if done:
                error = _text(_dict(item.get("error")).get("message"))
                content = _list(_dict(item.get("result")).get("content"))
                texts = [_text(_dict(c).get("text")) for c in content]
                output = error or "\n".join(t for t in texts if t)
                failed = bool(error) or item.get("status") == "failed"
                items.append(self._result(item_id, name, redact_text(output), failed, ts))
            return items
        if kind == "web_search":
            items = self._use(item_id, "web_search", "fetch", _text(item.get("query")), ts)
            if done:
                items.append(self._result(item_id, "web_search", "", False, ts))
            return items
        if not done:
            return []
        if kind == "file_change":
            changes = [_dict(c) for c in _list(item.get("changes"))]
            paths = ", ".join(f"{_text(c.get('kind'))} {_text(c.get('path'))}" for c in changes)
            items = self._use(item_id, "apply_patch", "edit", paths, ts)
            failed = item.get("status") == "failed"
            items.append(self._result(item_id, "apply_patch", redact_text(paths), failed, ts))
            return items
        text = redact_text(_text(item.get("text")) or _text(item.get("message")))
        if kind in ("agent_message", "plan") and text.strip():
            return [AssistantEvent(ts=ts, content=text)]
        if kind == "reasoning" and text.strip():
            return [ThinkingEvent(ts=ts, content=text)]
        if kind == "error":
            return [ErrorEvent(ts=ts, message=text)]
        return []

    def _result(
        self, item_id: str, name: str, output: str, failed: bool, ts: str
    ) -> ToolResultEvent:
        return ToolResultEvent(
            ts=ts, tool_use_id=item_id, name=name, output=output, is_error=failed
        )


class CodexRolloutConverter:
    """A rollout file pushed through ingest (e.g. `cat rollout.jsonl | sidemirror ingest`)."""

    agent = "codex"

    def __init__(self, default_session: str) -> None:
        self.parser = CodexParser()
        self.default_session = default_session
        self.titled = False

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        return self._emitted(self.parser.feed(record))

    def finish(self) -> list[Emitted]:
        return self._emitted(self.parser.flush())  # a user item held at the end is not lost

    def _emitted(self, items: list[SessionItem]) -> list[Emitted]:
        session = self.parser.session_id or self.default_session
        out = [Emitted(session, item) for item in items]
        if not self.titled and self.parser.first_prompt:
            self.titled = True
            out.append(Emitted(session, title=self.parser.first_prompt))
        return out
