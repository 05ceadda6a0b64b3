"""One ACP tool call: everything the updates of its `toolCallId` said so far.

Updates arrive in pieces: the title and input often come after the call opens, the kind only in
the first update, and output details (terminal output, the adapter's tool response in `_meta`)
may follow the `completed` status. So a call gathers what each update says and is shown, by the
converter, when it is complete enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import Attachment, ToolKind, ToolResultEvent, ToolUseEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.acp.content import block_attachments, block_text
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, flatten_content, one_line
from sidemirror.sources.diffs import acp_diff, claude_tool_diff
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
# A tool response that holds only these keys is a progress beat, not the tool's output.
_PROGRESS_KEYS = frozenset({"elapsedTimeSeconds"})


@dataclass
class ToolCall:
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
    elapsed_s: float | None = None  # the latest progress beat
    meta_output: list[str] = field(default_factory=list)  # `_meta.terminal_output` pieces
    denial: str = ""  # why the call was refused (its permission rule), when it was
    shown: bool = False
    result_shown: bool = False
    finished_ts: str = ""

    def merge(self, update: dict[str, Any]) -> None:
        meta = _dict(update.get("_meta"))
        claude = _dict(meta.get("claudeCode"))
        self.tool_name = _text(claude.get("toolName")) or self.tool_name
        self.parent = _text(claude.get("parentToolUseId")) or self.parent
        response = claude.get("toolResponse")
        if isinstance(response, dict) and response and set(response) <= _PROGRESS_KEYS:
            elapsed = response.get("elapsedTimeSeconds")
            if isinstance(elapsed, int | float) and not isinstance(elapsed, bool):
                self.elapsed_s = float(elapsed)
        elif "toolResponse" in claude:
            self.tool_response = response
        # A refused call's reason: later updates replace its content with the terminal, whose
        # output only says it was denied, so the reason is kept apart for the card.
        if isinstance(response, dict) and _text(response.get("decisionReason")):
            self.denial = one_line(_text(response.get("decisionReason")))
        # Zed's terminal extension: output pieces in `_meta`, as text (not base64).
        piece = _text(_dict(meta.get("terminal_output")).get("data"))
        if piece:
            self.meta_output.append(piece)
        self.acp_kind = _text(update.get("kind")) or self.acp_kind  # cached: updates omit it
        self.tool_name = self.tool_name or _text(update.get("name"))
        self.title = _text(update.get("title")) or self.title
        self.status = _text(update.get("status")) or self.status
        if update.get("rawInput"):
            self.raw_input = update["rawInput"]
        if update.get("rawOutput") is not None:
            self.raw_output = update["rawOutput"]
        # A `content` list replaces what the call showed; `tool_call_content_chunk` appends.
        if isinstance(update.get("content"), list) and update["content"]:
            self.content = list(update["content"])

    def append_content(self, block: Any) -> None:
        if isinstance(block, dict):
            self.content.append(block)

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
            # ACP `diff` content first (whole files); else what the adapter's tool asked for.
            diff=acp_diff(self._blocks()) or claude_tool_diff(self.tool_name, self.raw_input),
        )

    def _blocks(self) -> list[dict[str, Any]]:
        return [_dict(b) for b in self.content]

    def output(self, terminal: str) -> str:
        """The best text the updates gave: tool content, raw output, terminal output, the
        adapter's tool response, and last a note of which files a diff touched."""
        blocks = self._blocks()
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
        if terminal or self.meta_output:
            return terminal or "".join(self.meta_output)
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

    def terminal_ids(self) -> list[str]:
        """The terminals the call shows (claude-agent-acp names them after the call)."""
        ids = [_text(b.get("terminalId")) for b in self._blocks() if b.get("type") == "terminal"]
        return [i for i in ids if i] or [self.id]

    def attachments(self) -> list[Attachment]:
        return [
            a
            for b in self._blocks()
            if b.get("type") == "content"
            for a in block_attachments(b.get("content"))
        ]

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
            attachments=self.attachments(),
            denial=redact_text(self.denial) or None,
        )
