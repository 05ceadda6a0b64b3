"""The pieces of ACP conversion that hold state: one tool call, and a session's turns and cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import (
    AssistantDeltaEvent,
    AssistantEvent,
    CostSource,
    SessionItem,
    ThinkingEvent,
    ToolKind,
    ToolResultEvent,
    ToolUseEvent,
    TurnCompleteEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.pricing import estimate_cost_usd
from sidemirror.core.redact import redact_text
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, flatten_content, one_line
from sidemirror.sources.tool_names import tool_kind, tool_summary

# ACP's tool kinds → ours. `think` is what adapters call sub-agent and reasoning tools.
ACP_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "edit": "edit",
    "delete": "edit",
    "move": "edit",
    "search": "search",
    "execute": "execute",
    "fetch": "fetch",
    "think": "task",
    "switch_mode": "plan",
}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def block_text(content: Any) -> str:
    """Text of an ACP content block, or of a list of them (prompts, v2 user messages)."""
    if isinstance(content, list):
        return "\n".join(t for t in (block_text(b) for b in content) if t)
    block = _dict(content)
    kind = block.get("type")
    if kind == "text":
        return _text(block.get("text"))
    if kind == "resource_link":
        return f"[{_text(block.get('name')) or _text(block.get('uri'))}]"
    if kind == "resource":
        resource = _dict(block.get("resource"))
        return _text(resource.get("text")) or f"[{_text(resource.get('uri'))}]"
    if kind in ("image", "audio"):
        return f"[{kind}]"
    return ""


@dataclass
class ToolCall:
    """Everything the updates of one `toolCallId` said so far."""

    id: str
    first_ts: str
    status: str = "pending"
    title: str = ""
    acp_kind: str = ""
    tool_name: str = ""
    parent: str | None = None
    raw_input: Any = None
    raw_output: Any = None
    content: list[Any] = field(default_factory=list)
    tool_response: Any = None
    shown: bool = False
    result_shown: bool = False
    finished_ts: str = ""

    def merge(self, update: dict[str, Any]) -> None:
        meta = _dict(_dict(update.get("_meta")).get("claudeCode"))
        self.tool_name = _text(meta.get("toolName")) or self.tool_name
        self.parent = _text(meta.get("parentToolUseId")) or self.parent
        if "toolResponse" in meta:
            self.tool_response = meta["toolResponse"]
        self.acp_kind = _text(update.get("kind")) or self.acp_kind  # cached: updates omit it
        self.tool_name = self.tool_name or _text(update.get("name"))
        self.title = _text(update.get("title")) or self.title
        self.status = _text(update.get("status")) or self.status
        if update.get("rawInput"):
            self.raw_input = update["rawInput"]
        if update.get("rawOutput") is not None:
            self.raw_output = update["rawOutput"]
        if isinstance(update.get("content"), list) and update["content"]:
            self.content = update["content"]

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed")

    @property
    def name(self) -> str:
        return self.tool_name or self.acp_kind or self.title or "tool"

    @property
    def kind(self) -> ToolKind:
        if self.tool_name:
            known = tool_kind(self.tool_name)
            if known != "other":
                return known
        return ACP_KINDS.get(self.acp_kind, "other")

    def summary(self) -> str:
        if self.title and self.title != self.name:
            return one_line(self.title)
        if self.raw_input:
            return tool_summary(self.name, self.raw_input)
        return one_line(self.title)

    def use_item(self) -> ToolUseEvent:
        return ToolUseEvent(
            ts=self.first_ts,
            parent_tool_use_id=self.parent,
            tool_use_id=self.id,
            name=self.name,
            kind=self.kind,
            input=redact_text(self.summary()),
        )

    def output(self, terminal: str) -> str:
        """The best text the updates gave: tool content, raw output, terminal output, the
        adapter's tool response, and last a note of which files a diff touched."""
        blocks = [_dict(b) for b in self.content]
        text = "\n".join(
            t
            for t in (block_text(b.get("content")) for b in blocks if b.get("type") == "content")
            if t
        )
        if text:
            return text
        if self.raw_output is not None:
            raw = self.raw_output
            return raw if isinstance(raw, str) else flatten_content(raw)
        if terminal:
            return terminal
        response = _dict(self.tool_response)
        if "stdout" in response or "stderr" in response:
            streams = (_text(response.get("stdout")), _text(response.get("stderr")))
            return "\n".join(s for s in streams if s)
        if self.tool_response is not None:
            return compact_json(self.tool_response)
        paths = [_text(b.get("path")) for b in blocks if b.get("type") == "diff"]
        paths += [
            _text(_dict(c).get("path"))
            for b in blocks
            if b.get("type") == "diff"
            for c in _list(b.get("changes"))
        ]
        return "Edited " + ", ".join(p for p in paths if p) if any(paths) else ""

    def result_item(self, output: str) -> ToolResultEvent:
        ts = self.finished_ts or self.first_ts
        return ToolResultEvent(
            ts=ts,
            parent_tool_use_id=self.parent,
            tool_use_id=self.id,
            name=self.name,
            output=output,
            is_error=self.status == "failed",
            duration_ms=ms_between(self.first_ts, ts),
        )


@dataclass
class _Turn:
    number: int
    started: str
    cost_at_start: float | None
    cost_reported: bool = False


class AcpTurns:
    """Turn numbering and accounting. Cost: ACP `usage_update.cost` is the session's running
    total, so a turn's reported cost is its growth during the turn."""

    def __init__(self) -> None:
        self.count = 0
        self.current: _Turn | None = None
        self.cost_total: float | None = None

    def open(self, ts: str) -> None:
        self.count += 1
        self.current = _Turn(self.count, ts, self.cost_total)

    def ensure_open(self, ts: str) -> None:
        if self.current is None:
            self.open(ts)  # attached mid-session: the prompt was not seen

    def note_usage(self, update: dict[str, Any]) -> None:
        cost = _dict(update.get("cost"))
        amount = cost.get("amount")
        currency = _text(cost.get("currency")) or "USD"
        if isinstance(amount, int | float) and not isinstance(amount, bool) and currency == "USD":
            self.cost_total = float(amount)
            if self.current is not None:
                self.current.cost_reported = True

    def close(
        self, status: TurnStatus, usage: dict[str, Any], ts: str, model: str | None
    ) -> TurnCompleteEvent | None:
        turn, self.current = self.current, None
        if turn is None:
            return None
        tokens_in = _count(usage.get("inputTokens"))
        tokens_out = _count(usage.get("outputTokens"))
        cache_read = _count(usage.get("cachedReadTokens"))
        cache_write = _count(usage.get("cachedWriteTokens"))
        cost: float | None = None
        source: CostSource = "unknown_model"
        if turn.cost_reported and self.cost_total is not None:
            cost = max(0.0, self.cost_total - (turn.cost_at_start or 0.0))
            source = "reported"
        elif usage:
            cost = estimate_cost_usd(
                model,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cache_read_tokens=cache_read,
                cache_write_5m_tokens=cache_write,
                cache_write_1h_tokens=0,
            )
            source = "estimated" if cost is not None else "unknown_model"
        return TurnCompleteEvent(
            ts=ts,
            turn=turn.number,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            cost_usd=cost,
            cost_source=source,
            model=model,
            duration_ms=ms_between(turn.started, ts),
            status=status,
        )

    def delta(self, segment: str, text: str, parent: str | None, ts: str) -> AssistantDeltaEvent:
        return AssistantDeltaEvent(ts=ts, parent_tool_use_id=parent, segment_id=segment, text=text)

    def text_item(
        self, kind: str, text: str, ts: str, parent: str | None, segment: str | None
    ) -> SessionItem:
        if kind == "thinking":
            return ThinkingEvent(ts=ts, parent_tool_use_id=parent, content=text)
        return AssistantEvent(ts=ts, parent_tool_use_id=parent, content=text, segment_id=segment)

    def user_item(self, text: str, ts: str, parent: str | None) -> UserEvent:
        return UserEvent(ts=ts, parent_tool_use_id=parent, content=text)
