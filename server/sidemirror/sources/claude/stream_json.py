"""`claude -p --output-format stream-json --verbose [--include-partial-messages]` → canonical items.

Format notes, from real captures (Claude Code 2.1) and the Agent SDK's message types:
- `system/init` opens the run: `session_id`, `model`, `cwd`. Lines carry no timestamps, so items
  are stamped when converted (they are journaled, so the stamp survives a restart). Other
  `system` records (status, background tasks) are read by `stream_system.py`.
- `assistant` lines hold one content block each, like transcript lines; `user` lines hold tool
  results (or prompts, with `--replay-user-messages`). `parent_tool_use_id` marks sub-agent lines.
- Partial messages (`stream_event`) stream text and thinking live: `stream_partials.py`.
- `result` ends the run (one per prompt): reported `total_cost_usd`, aggregate `usage`,
  `duration_ms`, `modelUsage` (with each model's context window), the tool calls the user refused
  (`permission_denials`), and an `error_*` subtype / `is_error` when the run failed. An
  interrupted run says `[Request interrupted by user…]` in a user line, then ends with
  `error_during_execution`: that turn is `stopped`, not failed. A run cut off before its
  `result` (killed, or its pipe closed) is `stopped` too: its open turn, and the run's status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import (
    AssistantEvent,
    CostSource,
    ErrorEvent,
    SessionItem,
    SystemEvent,
    ThinkingEvent,
    ToolResultEvent,
    TurnCompleteEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.pricing import context_window_for, estimate_cost_usd
from sidemirror.core.redact import redact_text
from sidemirror.sources.base import Emitted
from sidemirror.sources.claude import stream_system
from sidemirror.sources.claude.stream_partials import Partials
from sidemirror.sources.claude.task_plan import TASK_PLAN_TOOLS, TaskPlans
from sidemirror.sources.claude.tools import thinking_item, tool_call_item, tool_result_item
from sidemirror.sources.claude.turns import Usage, usage_from
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import attachments, flatten_content

# Transport chatter of the SDK protocol and UI hints: nothing a reader of the session needs.
SKIPPED_TYPES = frozenset(
    {
        "keep_alive",
        "control_request",
        "control_response",
        "control_cancel_request",
        "auth_status",
        "rate_limit_event",
        "prompt_suggestion",
    }
)
INTERRUPTED = "[Request interrupted by user"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Turn:
    number: int
    usage: dict[str, Usage] = field(default_factory=dict)  # by message id, largest kept
    last: Usage | None = None  # the latest request's usage: what the model saw
    interrupted: bool = False


class StreamJsonConverter:
    agent = "claude"

    def __init__(self, default_session: str) -> None:
        self.session = default_session
        self.model: str | None = None
        self.run_status: str | None = None
        self._turns = 0
        self._turn: _Turn | None = None
        self._tools: dict[str, str] = {}  # tool_use_id -> name
        self._task_plans = TaskPlans()
        self._partials = Partials()
        self._system_records = stream_system.SystemRecords()
        self._seen_result = False

    # --- entry points ---

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        session = _text(record.get("session_id"))
        if session:
            self.session = session
        kind = record.get("type")
        items: list[SessionItem] = []
        title: str | None = None
        state: str | None = None
        if kind == "system":
            items, state = self._system(record)
        elif kind == "stream_event":
            items = self._partials.event(record)
            self.model = self._partials.model or self.model
            if items:
                self._open_turn()
        elif kind == "tool_progress":
            items = stream_system.tool_progress(record)
        elif kind == "assistant":
            items = self._assistant(record)
        elif kind == "user":
            items, title = self._user(record)
        elif kind == "result":
            items = self._result(record)
            state = "idle"
        elif kind not in SKIPPED_TYPES:
            content = f"Unrecognized stream-json record type {kind!r}"
            items = [SystemEvent(ts=now_iso(), subtype="unknown", content=content)]
        out = [Emitted(self.session, item) for item in items]
        if title is not None or state is not None:
            out.append(Emitted(self.session, title=title, state=state))
        return out

    def finish(self) -> list[Emitted]:
        """The stream ended: keep streamed text that never got its complete item."""
        items: list[SessionItem] = []
        for segment, raw in self._partials.unfinished():
            text = redact_text(raw)
            parent = segment.parent
            if segment.kind == "thinking":
                items.append(
                    ThinkingEvent(
                        ts=now_iso(), parent_tool_use_id=parent, content=text, segment_id=segment.id
                    )
                )
            else:
                items.append(
                    AssistantEvent(
                        ts=now_iso(), parent_tool_use_id=parent, content=text, segment_id=segment.id
                    )
                )
        # Cut off before its `result` (killed, Ctrl-C, the pipe closed): the turn did not fail,
        # it was stopped, and the run says the same as its turn_complete.
        if self._turn is not None:
            items.append(self._close("stopped", None, {}, None))
            self.run_status = "stopped"
        elif not self._seen_result and items:
            self.run_status = "stopped"
        return [Emitted(self.session, item) for item in items]

    # --- records ---

    def _system(self, record: dict[str, Any]) -> tuple[list[SessionItem], str | None]:
        subtype = _text(record.get("subtype")) or "unknown"
        if subtype == "init":
            self.model = _text(record.get("model")) or self.model
            self._system_records.mode = _text(record.get("permissionMode")) or None
            return [], "running"
        if self._system_records.owns(subtype):
            return self._system_records.record(record)
        content = _text(record.get("content")) or _text(record.get("message"))
        if subtype == "compact_boundary":
            subtype, content = "compact", content or "Conversation compacted"
        elif not content:
            content = stream_system.generic_system(record)
        return [SystemEvent(ts=now_iso(), subtype=subtype, content=redact_text(content))], None

    def _open_turn(self) -> _Turn:
        if self._turn is None:
            self._turns += 1
            self._turn = _Turn(self._turns)
        return self._turn

    def _assistant(self, record: dict[str, Any]) -> list[SessionItem]:
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        parent = _text(record.get("parent_tool_use_id")) or None
        turn = self._open_turn()
        message_id = _text(message.get("id"))
        self.model = _text(message.get("model")) or self.model
        usage = usage_from(message.get("usage"))
        if usage is not None and message_id:
            seen = turn.usage.get(message_id)
            if seen is None or usage.total > seen.total:
                turn.usage[message_id] = usage
            if parent is None:
                turn.last = turn.usage[message_id]
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        items: list[SessionItem] = []
        for block in blocks:
            if isinstance(block, dict):
                items += self._block(block, message_id, parent)
        return items

    def _block(
        self, block: dict[str, Any], message_id: str, parent: str | None
    ) -> list[SessionItem]:
        ts = now_iso()
        kind = block.get("type")
        if kind in ("text", "thinking"):
            segment, items = self._partials.complete(message_id, str(kind))
            segment_id = segment.id if segment is not None else None
            if kind == "thinking":
                for item in thinking_item(block, ts, parent):
                    if isinstance(item, ThinkingEvent):
                        item.segment_id = segment_id
                    items.append(item)
                return items
            text = _text(block.get("text"))
            if text.strip():
                content = redact_text(text)
                items.append(
                    AssistantEvent(
                        ts=ts, parent_tool_use_id=parent, content=content, segment_id=segment_id
                    )
                )
            return items
        if kind != "tool_use":
            return []
        tool_id, name = _text(block.get("id")), _text(block.get("name"))
        if not tool_id or tool_id in self._tools:
            return []
        self._tools[tool_id] = name
        if name in TASK_PLAN_TOOLS:
            return self._task_plans.of(parent).call(tool_id, name, block.get("input"), ts, parent)
        return [tool_call_item(tool_id, name, block.get("input"), ts, parent)]

    def _user(self, record: dict[str, Any]) -> tuple[list[SessionItem], str | None]:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        parent = _text(record.get("parent_tool_use_id")) or None
        ts = now_iso()
        results = [
            b
            for b in (content if isinstance(content, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        items: list[SessionItem] = []
        if results:
            for block in results:
                tool_id = _text(block.get("tool_use_id"))
                name = self._tools.get(tool_id, "")
                output = redact_text(flatten_content(block.get("content")))
                is_error = block.get("is_error") is True
                if name in TASK_PLAN_TOOLS:
                    plan = self._task_plans.of(parent)
                    structured = record.get("tool_use_result")
                    items += plan.result(tool_id, name, structured, output, is_error, ts, parent)
                    continue
                result_item = tool_result_item(tool_id, name, output, is_error, ts, parent)
                if isinstance(result_item, ToolResultEvent):
                    result_item.attachments = attachments(block.get("content"))
                if result_item is not None:
                    items.append(result_item)
            return items, None
        if record.get("isMeta") is True or record.get("isSynthetic") is True:
            return [], None
        text = redact_text(flatten_content(content))
        media = attachments(content)
        if not text.strip() and not media:
            return [], None
        if parent is None and text.lstrip().startswith(INTERRUPTED):
            # Not a prompt: the user stopped the run. The result that follows ends the turn.
            self._open_turn().interrupted = True
            return [SystemEvent(ts=ts, subtype="interrupted", content=text.strip())], None
        if parent is not None:
            tool = self._tools.get(parent) or "Task"  # the sub-agent's prompt, not the user's
            return [
                UserEvent(ts=ts, parent_tool_use_id=parent, content=text, task_prompt_tool=tool)
            ], None
        if self._turn is not None:
            items.append(self._close("stopped", None, {}, None))  # a new prompt ends the last
        self._open_turn()
        items.append(UserEvent(ts=ts, content=text, attachments=media))
        title = " ".join(text.split())[:80] if self._turns == 1 and text.strip() else None
        return items, title

    def _result(self, record: dict[str, Any]) -> list[SessionItem]:
        self._seen_result = True
        subtype = _text(record.get("subtype"))
        turn = self._open_turn()
        stopped = turn.interrupted or _text(record.get("terminal_reason")).startswith("aborted")
        failed = not stopped and (record.get("is_error") is True or subtype.startswith("error"))
        status: TurnStatus = "stopped" if stopped else "failed" if failed else "ok"
        self.run_status = status
        items = stream_system.permission_denials(record)
        if failed:
            errors = record.get("errors")
            detail = _text(record.get("result"))
            if isinstance(errors, list) and errors:
                detail = "\n".join(str(e) for e in errors)
            message = f"Run failed ({subtype or 'error'})" + (f": {detail}" if detail else "")
            items.append(ErrorEvent(ts=now_iso(), message=redact_text(message)))
        usage = record.get("usage")
        cost = record.get("total_cost_usd")
        reported = (
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        )
        closed = self._close(
            status,
            _int(record.get("duration_ms")),
            usage if isinstance(usage, dict) else {},
            reported,
        )
        closed.stop_reason = "interrupted" if stopped else _text(record.get("stop_reason")) or None
        if failed:
            closed.stop_reason = subtype or closed.stop_reason
        closed.context_window = _context_window(record, self.model) or closed.context_window
        items.append(closed)
        return items

    def _close(
        self,
        status: TurnStatus,
        duration_ms: int | None,
        reported_usage: dict[str, Any],
        reported_cost: float | None,
    ) -> TurnCompleteEvent:
        turn, self._turn = self._turn, None
        assert turn is not None
        # `result.usage` is the run's own total; without one, sum the deduplicated messages.
        usage = usage_from(reported_usage) if reported_usage else None
        if usage is None:
            usage = Usage()
            for u in turn.usage.values():
                usage = Usage(
                    usage.input + u.input,
                    usage.output + u.output,
                    usage.cache_read + u.cache_read,
                    usage.cache_write_5m + u.cache_write_5m,
                    usage.cache_write_1h + u.cache_write_1h,
                )
        cost = reported_cost
        source_: CostSource = "reported"
        if cost is None:
            cost = estimate_cost_usd(
                self.model,
                input_tokens=usage.input,
                output_tokens=usage.output,
                cache_read_tokens=usage.cache_read,
                cache_write_5m_tokens=usage.cache_write_5m,
                cache_write_1h_tokens=usage.cache_write_1h,
            )
            source_ = "estimated" if cost is not None else "unknown_model"
        # The context: what the turn's last main-thread request sent (input and cache).
        last = turn.last
        context = None if last is None else last.total - last.output
        return TurnCompleteEvent(
            ts=now_iso(),
            turn=turn.number,
            input_tokens=usage.input,
            output_tokens=usage.output,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_write_5m + usage.cache_write_1h,
            cost_usd=cost,
            cost_source=source_,
            model=self.model,
            duration_ms=duration_ms,
            status=status,
            context_tokens=context,
            context_window=context_window_for(self.model),  # the result's own figure wins
        )


def _context_window(result: dict[str, Any], model: str | None) -> int | None:
    """The context window `result.modelUsage` reports for the run's model (else the largest)."""
    usage = _dict(result.get("modelUsage"))
    windows = {
        name: window
        for name, data in usage.items()
        if isinstance(window := _dict(data).get("contextWindow"), int) and window > 0
    }
    if model in windows:
        return windows[model]
    return max(windows.values(), default=None)
