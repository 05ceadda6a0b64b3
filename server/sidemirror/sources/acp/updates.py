"""What the mirror makes of each ACP `session/update` kind, and the small ones' items.

`UPDATE_KINDS` lists every kind of the published schema (v1, its unstable additions, the v2
draft) and the two a widely used client (Multica) stores in its sessions; docs/protocol.md is
generated from it. A kind not listed here is one the schema reserves for the future (or an
`_`-prefixed extension) and shows as a `system` item with subtype `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.models import ErrorEvent, PlanEntry, PlanEvent, SessionItem, SystemEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.acp.content import block_text
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text

UPDATE_KINDS: dict[str, str] = {
    "user_message_chunk": "`user` (chunks of one `messageId` joined); the echo of a prompt "
    "already shown, or of a hidden `_internal` one, is dropped",
    "user_message": "`user` (v2: the whole message; empty, the start of its chunks); "
    "`_internal: true` is never shown and never opens or closes a turn",
    "agent_message_chunk": "`assistant`, streamed live as `assistant_delta`; chunks are joined "
    "in `sequenceNumber` order where a client numbered them (live text stops where they came "
    "out of order), and images in them become the item's `attachments`",
    "agent_message": "`assistant` (v2 whole message, or the start of its chunks)",
    "agent_thought_chunk": "`thinking`, streamed live as `thinking_delta`",
    "agent_thought": "`thinking` (v2 whole thought, or the start of its chunks)",
    "tool_call": "`tool_use` once it leaves `pending` (or asks permission); `tool_result` when "
    "it completes or fails, with image content as `attachments`",
    "tool_call_update": "updates the call; an `in_progress` beat with elapsed time is a live "
    "`tool_progress`; a refused call's reason (`_meta.claudeCode.toolResponse.decisionReason`) "
    "becomes its `tool_result`'s `denial`",
    "tool_call_content_chunk": "appended to the call's output (v2)",
    "terminal_update": "the output of the call showing that terminal (v2; a full replacement)",
    "terminal_output_chunk": "appended to that terminal's output (v2)",
    "plan": "`plan`",
    "plan_update": "`plan` (entries; a markdown or file plan as one entry)",
    "plan_removed": "`plan` with no entries",
    "available_commands_update": "not shown: the agent's slash-command menu is not part of "
    "the conversation",
    "current_mode_update": "`system` line, subtype `mode`, when the mode changes",
    "config_option_update": "a `mode` line when the mode option changes; the model option "
    "names `turn_complete.model`; other options are settings, not shown",
    "session_info_update": "the session's title (not an item)",
    "usage_update": "`turn_complete.context_tokens`/`context_window` (`used`/`size`) and the "
    "turn's reported cost (the growth of `cost`); not an item",
    "state_update": "the session's state (`running`, `waiting`, `idle`); with `stopReason` it "
    "closes the turn",
    "notice": "`system` line, subtype `notice` (title and description; a warning says so); "
    "severity `error` is an `error` item",
    "compaction_update": "`system` item, subtype `compact`, when it completes (its summary); "
    "`error` when it fails",
    "compaction_summary_chunk": "joined into that compaction's summary",
    "error_message": "`error` with its message (Multica); closes the open turn as `failed`, "
    "its `errorType` kept as `stop_reason`",
    "askuserquestion_response": "the `tool_result` of that AskUserQuestion call: the answers "
    "(Multica)",
}


def plan_item(update: dict[str, Any], parent: str | None, ts: str) -> PlanEvent:
    """v1 `plan` (`entries`), v2 `plan_update` (`plan: {type: items|markdown|file}`), and
    `plan_removed` (no entries)."""
    plan = _dict(update.get("plan"))
    entries: list[PlanEntry] = []
    raw = plan.get("entries") if plan else update.get("entries")
    for entry in raw if isinstance(raw, list) else []:
        if isinstance(entry, dict):
            entries.append(
                PlanEntry(
                    content=redact_text(_text(entry.get("content"))),
                    status=_text(entry.get("status")) or "pending",
                    priority=_text(entry.get("priority")) or "medium",
                )
            )
    whole = _text(plan.get("content")) or _text(plan.get("uri"))
    if not entries and whole:
        entries.append(PlanEntry(content=redact_text(whole)))
    return PlanEvent(ts=ts, parent_tool_use_id=parent, entries=entries)


def notice_item(update: dict[str, Any], ts: str) -> SessionItem:
    severity = _text(update.get("severity")) or "info"
    title = _text(update.get("title"))
    description = _text(update.get("description"))
    text = redact_text("\n".join(p for p in (title, description) if p))
    if severity == "error":
        return ErrorEvent(ts=ts, message=text)
    prefix = "Warning: " if severity == "warning" else ""
    return SystemEvent(ts=ts, subtype="notice", content=prefix + text)


def error_message_item(update: dict[str, Any], ts: str) -> ErrorEvent:
    """Multica's `error_message` (`errorType`, `message`, and for an auth error the command
    that signs in)."""
    message = _text(update.get("message")) or "The agent reported an error"
    command = _text(update.get("authCommand"))
    if command:
        message += f"\nTo sign in: {command}"
    return ErrorEvent(ts=ts, message=redact_text(message))


def answers_text(response: dict[str, Any]) -> str:
    """An AskUserQuestion answer as Multica stores it: question → answer lines, else the
    options picked and any text typed."""
    lines = []
    for pair in _list(response.get("answers")):
        pair = _dict(pair)
        question, answer = _text(pair.get("question")), _text(pair.get("answer"))
        if answer:
            lines.append(f"{question} → {answer}" if question else answer)
    if not lines:
        picked = [_text(o) for o in _list(response.get("selectedOptions"))]
        picked.append(_text(response.get("selectedOption")))
        lines = [p for p in picked if p]
        custom = _text(response.get("customText"))
        if custom:
            lines.append(custom)
    return "\n".join(lines) or "(answered)"


@dataclass
class Modes:
    """A session's modes: their names (from session/new or load), and the current one. Only a
    change is shown: the mode a session starts in is not news."""

    names: dict[str, str] = field(default_factory=dict)
    current: str | None = None

    def learn(self, payload: dict[str, Any]) -> None:
        modes = _dict(payload.get("modes"))
        for mode in _list(modes.get("availableModes")):
            mode = _dict(mode)
            if _text(mode.get("id")):
                self.names[_text(mode["id"])] = _text(mode.get("name")) or _text(mode["id"])
        self.current = _text(modes.get("currentModeId")) or self.current
        self.options(_list(payload.get("configOptions")), "")

    def change(self, mode_id: str, ts: str) -> SystemEvent | None:
        if not mode_id or mode_id == self.current:
            return None
        first, self.current = self.current is None, mode_id
        if first and not ts:
            return None
        name = self.names.get(mode_id, mode_id)
        return SystemEvent(ts=ts, subtype="mode", content=redact_text(f"Mode: {name}"))

    def options(self, options: list[Any], ts: str) -> SystemEvent | None:
        """The `mode` category of config options (names, current value); `ts` "" only learns."""
        for option in options:
            option = _dict(option)
            if option.get("category") != "mode":
                continue
            for choice in _list(option.get("options")):
                choice = _dict(choice)
                if _text(choice.get("value")):
                    self.names[_text(choice["value"])] = _text(choice.get("name"))
            return self.change(_text(option.get("currentValue")), ts)
        return None


def model_option(options: list[Any]) -> str:
    for option in options:
        option = _dict(option)
        if option.get("category") == "model":
            return _text(option.get("currentValue"))
    return ""


@dataclass
class Compactions:
    """Context compactions in progress: their summaries arrive in chunks, their end as an
    update with the status (and maybe the whole summary)."""

    summaries: dict[str, list[str]] = field(default_factory=dict)

    def chunk(self, update: dict[str, Any]) -> None:
        self.summaries.setdefault(_text(update.get("compactionId")), []).append(
            block_text(update.get("content"))
        )

    def update(self, update: dict[str, Any], ts: str) -> list[SessionItem]:
        key = _text(update.get("compactionId"))
        status = _text(update.get("status"))
        if status == "in_progress":
            self.summaries.setdefault(key, [])
            return []
        pieces = self.summaries.pop(key, [])
        if status == "failed":
            error = _text(update.get("error")) or "unknown error"
            return [ErrorEvent(ts=ts, message=redact_text(f"Compaction failed: {error}"))]
        if status != "completed":
            text = redact_text(f"Compaction {status}")
            return [SystemEvent(ts=ts, subtype="compact", content=text)]
        summary = block_text(update.get("summary")) or "".join(pieces)
        content = redact_text(summary) or "Conversation compacted"
        return [SystemEvent(ts=ts, subtype="compact", content=content)]
