"""`claude -p --output-format stream-json --verbose [--include-partial-messages]` → canonical items.

Format notes, from real captures (Claude Code 2.1):
- `system/init` opens the run: `session_id`, `model`, `cwd`. Lines carry no timestamps, so items
  are stamped when converted (they are journaled, so the stamp survives a restart).
- `assistant` lines hold one content block each, like transcript lines; `user` lines hold tool
  results (or prompts, with `--replay-user-messages`). `parent_tool_use_id` marks sub-agent lines.
- With partial messages, `stream_event` lines wrap raw API stream events: `message_start` names
  the message, `content_block_start/delta/stop` stream each block by index. The complete
  `assistant` line for a block arrives around its `content_block_stop`, either side of it.
- `result` ends the run (one per prompt): reported `total_cost_usd`, aggregate `usage`,
  `duration_ms`, and an `error_*` subtype / `is_error` when the run failed.

Partial text becomes `assistant_delta` events with `segment_id` `<message id>:<block index>`; the
complete `assistant` item carries the same `segment_id`, so the panel swaps the partial text for it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import (
    AssistantDeltaEvent,
    AssistantEvent,
    CostSource,
    ErrorEvent,
    SessionItem,
    SystemEvent,
    TurnCompleteEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.pricing import estimate_cost_usd
from sidemirror.core.redact import redact_text
from sidemirror.sources.base import Emitted
from sidemirror.sources.claude.tools import thinking_item, tool_call_item, tool_result_item
from sidemirror.sources.claude.turns import Usage, usage_from
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, flatten_content
from sidemirror.sources.delta_redactor import DeltaRedactor

# Transport chatter of the SDK protocol: nothing a reader of the session needs.
SKIPPED_TYPES = frozenset(
    {
        "keep_alive",
        "control_request",
        "control_response",
        "control_cancel_request",
        "tool_progress",
        "auth_status",
    }
)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Segment:
    id: str
    redactor: DeltaRedactor = field(default_factory=DeltaRedactor)


@dataclass
class _Turn:
    number: int
    usage: dict[str, Usage] = field(default_factory=dict)  # by message id, largest kept


class StreamJsonConverter:
    agent = "claude"

    def __init__(self, default_session: str) -> None:
        self.session = default_session
        self.model: str | None = None
        self.run_status: str | None = None
        self._turns = 0
        self._turn: _Turn | None = None
        self._tools: dict[str, str] = {}  # tool_use_id -> name
        self._message: dict[str | None, str] = {}  # parent -> message id being streamed
        self._streaming: dict[tuple[str, int], _Segment] = {}  # (message id, index) -> segment
        self._queued: dict[str, deque[_Segment]] = {}  # message id -> text segments, in order
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
            items = self._stream_event(record)
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
        for (message_id, _index), segment in self._streaming.items():
            if segment.redactor.raw and segment in self._queued.get(message_id, ()):
                text = redact_text(segment.redactor.raw)
                items.append(AssistantEvent(ts=now_iso(), content=text, segment_id=segment.id))
        if self._turn is not None:
            items.append(self._close("stopped", None, {}, None))
        if not self._seen_result and (items or self._turns):
            self.run_status = "failed"  # the run ended without a result: killed or crashed
        return [Emitted(self.session, item) for item in items]

    # --- records ---

    def _system(self, record: dict[str, Any]) -> tuple[list[SessionItem], str | None]:
        subtype = _text(record.get("subtype")) or "unknown"
        if subtype == "init":
            self.model = _text(record.get("model")) or self.model
            return [], "running"
        content = _text(record.get("content")) or _text(record.get("message"))
        if subtype == "compact_boundary":
            subtype, content = "compact", content or "Conversation compacted"
        elif not content:
            rest = {k: v for k, v in record.items() if k not in ("type", "subtype", "uuid")}
            content = compact_json(rest)
        return [SystemEvent(ts=now_iso(), subtype=subtype, content=redact_text(content))], None

    def _open_turn(self) -> _Turn:
        if self._turn is None:
            self._turns += 1
            self._turn = _Turn(self._turns)
        return self._turn

    def _stream_event(self, record: dict[str, Any]) -> list[SessionItem]:
        event = record.get("event")
        if not isinstance(event, dict):
            return []
        parent = _text(record.get("parent_tool_use_id")) or None
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and _text(message.get("id")):
                self._message[parent] = _text(message.get("id"))
                self.model = _text(message.get("model")) or self.model
            return []
        message_id = self._message.get(parent)
        index = _int(event.get("index"))
        if message_id is None or index is None:
            return []
        if kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, dict) and block.get("type") == "text":
                segment = _Segment(f"{message_id}:{index}")
                self._streaming[(message_id, index)] = segment
                self._queued.setdefault(message_id, deque()).append(segment)
                return self._delta(segment, parent, segment.redactor.push(_text(block.get("text"))))
            return []
        streamed = self._streaming.get((message_id, index))
        if streamed is None:
            return []
        if kind == "content_block_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "text_delta":
                self._open_turn()
                return self._delta(
                    streamed, parent, streamed.redactor.push(_text(delta.get("text")))
                )
        elif kind == "content_block_stop":
            return self._delta(streamed, parent, streamed.redactor.finish())
        return []

    def _delta(self, segment: _Segment, parent: str | None, text: str) -> list[SessionItem]:
        if not text:
            return []
        return [
            AssistantDeltaEvent(
                ts=now_iso(), parent_tool_use_id=parent, segment_id=segment.id, text=text
            )
        ]

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
        if kind == "text":
            queue = self._queued.get(message_id)
            segment = queue.popleft() if queue else None
            items: list[SessionItem] = []
            if segment is not None:
                # The deltas' concatenation must equal this item's text: release the held tail.
                items += self._delta(segment, parent, segment.redactor.finish())
            text = _text(block.get("text"))
            if not text.strip():
                return items
            items.append(
                AssistantEvent(
                    ts=ts,
                    parent_tool_use_id=parent,
                    content=redact_text(text),
                    segment_id=segment.id if segment is not None else None,
                )
            )
            return items
        if kind == "thinking":
            return thinking_item(block, ts, parent)
        if kind != "tool_use":
            return []
        tool_id, name = _text(block.get("id")), _text(block.get("name"))
        if not tool_id or tool_id in self._tools:
            return []
        self._tools[tool_id] = name
        tool_input = block.get("input")
        return [tool_call_item(tool_id, name, tool_input, ts, parent)]

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
                result_item = tool_result_item(tool_id, name, output, is_error, ts, parent)
                if result_item is not None:
                    items.append(result_item)
            return items, None
        if record.get("isMeta") is True or record.get("isSynthetic") is True:
            return [], None
        text = redact_text(flatten_content(content))
        if not text.strip():
            return [], None
        if parent is not None:
            return [UserEvent(ts=ts, parent_tool_use_id=parent, content=text)], None
        if self._turn is not None:
            items.append(self._close("stopped", None, {}, None))  # a new prompt ends the last
        self._open_turn()
        items.append(UserEvent(ts=ts, content=text))
        title = " ".join(text.split())[:80] if self._turns == 1 else None
        return items, title

    def _result(self, record: dict[str, Any]) -> list[SessionItem]:
        self._seen_result = True
        subtype = _text(record.get("subtype"))
        failed = record.get("is_error") is True or subtype.startswith("error")
        self.run_status = "failed" if failed else "ok"
        items: list[SessionItem] = []
        if failed:
            errors = record.get("errors")
            detail = _text(record.get("result"))
            if isinstance(errors, list) and errors:
                detail = "\n".join(str(e) for e in errors)
            message = f"Run failed ({subtype or 'error'})" + (f": {detail}" if detail else "")
            items.append(ErrorEvent(ts=now_iso(), message=redact_text(message)))
        self._open_turn()
        usage = record.get("usage")
        cost = record.get("total_cost_usd")
        reported = (
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        )
        items.append(
            self._close(
                "failed" if failed else "ok",
                _int(record.get("duration_ms")),
                usage if isinstance(usage, dict) else {},
                reported,
            )
        )
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
        )
