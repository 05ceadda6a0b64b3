"""stream-json partial messages (`--include-partial-messages`): text and thinking as they stream.

`stream_event` lines wrap raw API stream events: `message_start` names the message,
`content_block_start/delta/stop` stream each block by index. A text block streams
`text_delta`s, a thinking block `thinking_delta`s. Each streamed block is a segment
(`<message id>:<block index>`) sent live as `assistant_delta` or `thinking_delta`; the complete
`assistant` line for the block arrives around its `content_block_stop`, either side of it, and its
item carries the same `segment_id` so the panel swaps the partial text for it. Segments are
redacted as they stream (`DeltaRedactor`), so a secret split across deltas never leaves whole.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import AssistantDeltaEvent, SessionItem, ThinkingDeltaEvent
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.delta_redactor import DeltaRedactor

# Block type → the delta field that streams it.
_STREAMED = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking")}
_BLOCK_OF_DELTA = {delta: block for block, (delta, _) in _STREAMED.items()}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Segment:
    id: str
    kind: str  # text / thinking
    parent: str | None
    redactor: DeltaRedactor = field(default_factory=DeltaRedactor)


class Partials:
    def __init__(self) -> None:
        self.model: str | None = None
        self._message: dict[str | None, str] = {}  # parent → message id being streamed
        self._streaming: dict[tuple[str, int], Segment] = {}  # (message id, index) → segment
        # (message id, block kind) → its streamed segments, in order, not yet completed
        self._queued: dict[tuple[str, str], deque[Segment]] = {}

    def event(self, record: dict[str, Any]) -> list[SessionItem]:
        """The live deltas of one `stream_event` line."""
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
            block_type = _text(block.get("type")) if isinstance(block, dict) else ""
            if not isinstance(block, dict) or block_type not in _STREAMED:
                return []
            started = self._start(message_id, index, block_type, parent)
            first = _text(block.get(_STREAMED[block_type][1]))
            return self._delta(started, started.redactor.push(first))
        segment = self._streaming.get((message_id, index))
        if segment is None and kind == "content_block_delta":
            # A delta whose block start was not seen (a relay that dropped it, a reader joining
            # mid-block): its own type says what it streams, so it still goes out live.
            delta = event.get("delta")
            delta_type = _text(delta.get("type")) if isinstance(delta, dict) else ""
            implied = _BLOCK_OF_DELTA.get(delta_type)
            if implied is not None:
                segment = self._start(message_id, index, implied, parent)
        if segment is None:
            return []
        if kind == "content_block_delta":
            delta = event.get("delta")
            delta_type, key = _STREAMED[segment.kind]
            if isinstance(delta, dict) and delta.get("type") == delta_type:
                return self._delta(segment, segment.redactor.push(_text(delta.get(key))))
        elif kind == "content_block_stop":
            return self._delta(segment, segment.redactor.finish())
        return []

    def _start(self, message_id: str, index: int, block_type: str, parent: str | None) -> Segment:
        started = Segment(f"{message_id}:{index}", block_type, parent)
        self._streaming[(message_id, index)] = started
        self._queued.setdefault((message_id, block_type), deque()).append(started)
        return started

    def complete(self, message_id: str, kind: str) -> tuple[Segment | None, list[SessionItem]]:
        """The complete block of `kind` in an `assistant` line: the segment it completes (its
        blocks arrive in order) and the held tail of that segment's deltas, so that their
        concatenation equals the item's text."""
        queue = self._queued.get((message_id, kind))
        segment = queue.popleft() if queue else None
        if segment is None:
            return None, []
        return segment, self._delta(segment, segment.redactor.finish())

    def unfinished(self) -> list[tuple[Segment, str]]:
        """Streamed segments that never got their complete block, with their raw text."""
        return [
            (segment, segment.redactor.raw)
            for queue in self._queued.values()
            for segment in queue
            if segment.redactor.raw
        ]

    def _delta(self, segment: Segment, text: str) -> list[SessionItem]:
        if not text:
            return []
        cls = AssistantDeltaEvent if segment.kind == "text" else ThinkingDeltaEvent
        return [
            cls(ts=now_iso(), parent_tool_use_id=segment.parent, segment_id=segment.id, text=text)
        ]
