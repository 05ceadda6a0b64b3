"""One ACP session being converted: what is held back, and the order things are shown in.

Streams arrive in pieces and items are append-only, so text and tool calls are held until they
are complete enough to show:
- message/thought/user chunks accumulate per kind and `messageId`; anything shown after them ends
  the run (assistant and thought chunks also go out live as `assistant_delta`/`thinking_delta`);
- a tool call is shown once it leaves `pending` (or asks permission, or something else must be
  shown after it). Its result is held until an update about something else arrives, since output
  details (terminal output, the tool response in `_meta`) may follow the `completed` status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.models import (
    AssistantDeltaEvent,
    AssistantEvent,
    Attachment,
    SessionItem,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolProgressEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.redact import redact_text
from sidemirror.sources.acp import updates
from sidemirror.sources.acp.content import block_attachments, block_text
from sidemirror.sources.acp.tool_call import ToolCall
from sidemirror.sources.acp.turns import AcpTurns
from sidemirror.sources.base import Emitted
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.delta_redactor import DeltaRedactor

# v2 sends a whole message (or announces one) in a single update: it always starts a new run.
WHOLE_MESSAGES = frozenset({"agent_message", "agent_thought", "user_message"})


@dataclass
class RunInfo:
    """What the converter learns across sessions: the model, and how the run ended."""

    model: str | None = None
    status: str | None = None  # ok / failed / stopped, from the last turn that closed


@dataclass
class _Chunks:
    kind: str  # assistant / thinking / user
    message_id: str
    parent: str | None
    ts: str
    parts: list[str] = field(default_factory=list)
    # Each part's `sequenceNumber`, where the client numbered its chunks (None elsewhere).
    numbers: list[int | None] = field(default_factory=list)
    media: list[Attachment] = field(default_factory=list)
    live: DeltaRedactor | None = None
    disordered: bool = False  # a chunk came before one numbered lower: no more live deltas

    def text(self) -> str:
        """The chunks joined in their numbered order (stored clients may keep them out of
        order); a chunk without a number keeps its place after the one before it."""
        if not any(n is not None for n in self.numbers):
            return "".join(self.parts)
        keys: list[int] = []
        last = -1
        for n in self.numbers:
            last = n if n is not None else last
            keys.append(last)
        order = sorted(range(len(self.parts)), key=lambda i: keys[i])  # stable: ties in arrival
        return "".join(self.parts[i] for i in order)

    def add(self, text: str, number: int | None) -> bool:
        """Add a chunk; False once the chunks have come out of order (live text would be
        wrong: the complete item, in order, replaces what was streamed)."""
        numbered = [n for n in self.numbers if n is not None]
        if number is not None and numbered and number < max(numbered):
            self.disordered = True
        self.parts.append(text)
        self.numbers.append(number)
        return not self.disordered


@dataclass
class AcpSession:
    id: str
    run: RunInfo
    turns: AcpTurns = field(default_factory=AcpTurns)
    chunks: _Chunks | None = None
    tools: dict[str, ToolCall] = field(default_factory=dict)
    held: ToolCall | None = None  # completed; its output may still be enriched
    terminals: dict[str, list[str]] = field(default_factory=dict)
    prompt_texts: list[str] = field(default_factory=list)  # prompts of the open turn
    hidden_texts: set[str] = field(default_factory=set)  # `_internal` prompts: never shown
    modes: updates.Modes = field(default_factory=updates.Modes)
    compactions: updates.Compactions = field(default_factory=updates.Compactions)
    anonymous: int = 0

    # --- text runs ---

    def chunk(
        self, kind: str, update: dict[str, Any], parent: str | None, ts: str
    ) -> list[Emitted]:
        content = update.get("content")
        message_id = _text(update.get("messageId"))
        run = self.chunks
        out: list[Emitted] = []
        same = run is not None and run.kind == kind and run.message_id == message_id
        if same and update.get("sessionUpdate") in WHOLE_MESSAGES:
            same = False
        if run is None or not same:
            out += self.flush_chunks()
            if kind != "user":
                out += self.flush_tools()
            if not message_id:
                self.anonymous += 1
            run = _Chunks(kind, message_id, parent, ts)
            if kind != "user":
                run.live = DeltaRedactor()
            self.chunks = run
        text = block_text(content)
        in_order = run.add(text, _number(update.get("sequenceNumber")))
        run.media += block_attachments(content)
        if run.live is not None and in_order:
            out += self._delta(run, run.live.push(text))
        return out

    def _segment(self, run: _Chunks) -> str:
        prefix = "acp" if run.kind == "assistant" else "acp-thought"
        return f"{prefix}:{run.message_id or self.anonymous}"

    def _delta(self, run: _Chunks, piece: str) -> list[Emitted]:
        if not piece:
            return []
        cls = AssistantDeltaEvent if run.kind == "assistant" else ThinkingDeltaEvent
        segment = self._segment(run)
        item = cls(ts=run.ts, parent_tool_use_id=run.parent, segment_id=segment, text=piece)
        return [Emitted(self.id, item)]

    def flush_chunks(self) -> list[Emitted]:
        run, self.chunks = self.chunks, None
        if run is None:
            return []
        text = run.text()
        held = run.live is not None and not run.disordered
        out = self._delta(run, run.live.finish()) if run.live is not None and held else []
        if not text.strip() and not run.media:
            return out
        if run.kind == "user":
            echo = text.strip() in self.prompt_texts or text.strip() in self.hidden_texts
            if run.parent is None and echo and not run.media:
                return out  # the prompt request already showed it (or it is hidden)
            return out + self.user(text, run.ts, run.parent, run.media)
        segment = self._segment(run) if run.live is not None else None
        content = redact_text(text)
        item: SessionItem
        if run.kind == "thinking":
            item = ThinkingEvent(
                ts=run.ts, parent_tool_use_id=run.parent, content=content, segment_id=segment
            )
        else:
            item = AssistantEvent(
                ts=run.ts,
                parent_tool_use_id=run.parent,
                content=content,
                segment_id=segment,
                attachments=run.media,
            )
        return out + self.emit([item])

    # --- prompts and turns ---

    def user(
        self, text: str, ts: str, parent: str | None, media: list[Attachment]
    ) -> list[Emitted]:
        """A user message; a top-level one opens a turn (closing, as stopped, any still open)."""
        out: list[Emitted] = []
        if parent is None:
            out += self.flush_tools() + self.flush_held()
            out += self.close_turn("stopped", {}, ts, None)
            self.prompt_texts = []
            self.turns.open(ts)
        first = self.turns.count == 1 and parent is None
        content = redact_text(text)
        item = UserEvent(ts=ts, parent_tool_use_id=parent, content=content, attachments=media)
        out.append(Emitted(self.id, item))
        if first and content.strip():
            out.append(Emitted(self.id, title=" ".join(content.split())[:80]))
        return out

    def close_turn(
        self, status: TurnStatus, usage: dict[str, Any], ts: str, reason: str | None
    ) -> list[Emitted]:
        closed = self.turns.close(status, usage, ts, self.run.model, reason)
        return [Emitted(self.id, closed)] if closed is not None else []

    # --- tool calls ---

    def tool_update(self, update: dict[str, Any], ts: str) -> list[Emitted]:
        tool_id = _text(update.get("toolCallId"))
        if not tool_id:
            return []
        tool = self.tools.get(tool_id)
        if tool is None:
            tool = ToolCall(tool_id, ts)
            self.tools[tool_id] = tool
        beat = tool.elapsed_s
        tool.merge(update)
        out: list[Emitted] = []
        if tool.status != "pending" and not tool.shown:
            out += self.show_tool(tool)
        if tool.elapsed_s != beat and tool.shown and not tool.finished:
            out.append(Emitted(self.id, _progress(tool, ts)))
        if tool.finished and not tool.result_shown and self.held is not tool:
            out += self.flush_held()
            tool.finished_ts = tool.finished_ts or ts
            self.held = tool
        return out

    def show_tool(self, tool: ToolCall) -> list[Emitted]:
        """Show `tool`, after any call seen before it that is still unshown (a sub-agent's
        own call stays pending while its children run, but it came first)."""
        items: list[SessionItem] = []
        for other in self.tools.values():
            if not other.shown:
                other.shown = True
                items.append(other.use_item())
            if other is tool:
                break
        return self.emit(items, flush_tools=False)

    def flush_tools(self) -> list[Emitted]:
        out: list[Emitted] = []
        for tool in self.tools.values():
            if not tool.shown:
                out += self.show_tool(tool)
        return out

    def flush_held(self) -> list[Emitted]:
        tool, self.held = self.held, None
        if tool is None or tool.result_shown:
            return []
        tool.result_shown = True
        terminal = "".join("".join(self.terminals.get(t, [])) for t in tool.terminal_ids())
        output = tool.output(terminal)
        return self.emit([tool.result_item(redact_text(output))], flush_tools=False)

    # --- emission ---

    def flush(self) -> list[Emitted]:
        return self.flush_chunks() + self.flush_tools() + self.flush_held()

    def line(self, item: SessionItem | None) -> list[Emitted]:
        """A line about the session (mode, notice, compaction, error): in order, but between
        turns it opens none."""
        if item is None:
            return []
        out = self.flush_held() + self.flush_chunks()
        return out + self.emit([item], opens_turn=False)

    def emit(
        self, items: list[SessionItem], *, flush_tools: bool = True, opens_turn: bool = True
    ) -> list[Emitted]:
        out = self.flush_tools() if flush_tools else []
        for item in items:
            if opens_turn:
                self.turns.ensure_open(item.ts)  # attached mid-session: the prompt was not seen
            out.append(Emitted(self.id, item))
        return out


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _progress(tool: ToolCall, ts: str) -> ToolProgressEvent:
    elapsed = None if tool.elapsed_s is None else round(tool.elapsed_s * 1000)
    return ToolProgressEvent(
        ts=ts,
        parent_tool_use_id=tool.parent,
        tool_use_id=tool.id,
        name=tool.name,
        elapsed_ms=elapsed,
    )
