"""ACP (Agent Client Protocol) traffic → canonical items.

Records are either the envelope `sidemirror acp-tap` sends (and claude-agent-acp's recorded
snapshots use): `{"kind": "notification"|"request"|"response", "method", "payload", "ts"?}`, or
raw JSON-RPC messages (`{"jsonrpc", "method", "params"}`; a bare response is taken as a prompt's
when its result has a `stopReason`).

Streams arrive in pieces and items are append-only, so text and tool calls are held until they
are complete enough to show:
- message/thought/user chunks accumulate per kind and `messageId`; any other update ends the run
  (assistant chunks also go out live as `assistant_delta` with `segment_id` `acp:<messageId>`);
- a tool call is shown once it leaves `pending` (or asks permission, or something else must be
  shown after it); its title and input often arrive in later updates. Its result is held until an
  update about something else arrives, since output details (terminal output, the tool response
  in `_meta`) may follow the `completed` status. `kind` is cached per `toolCallId`: updates omit it.
Both ACP v1 (`user_message_chunk`, `plan`, prompt response `stopReason`) and the v2 draft
(`user_message`, `plan_update`, `state_update` with `stopReason` and `usage`) are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import PlanEntry, PlanEvent, SessionItem, SystemEvent, TurnStatus
from sidemirror.core.redact import redact_text
from sidemirror.sources.acp.parts import AcpTurns, ToolCall, block_text
from sidemirror.sources.base import Emitted
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.delta_redactor import DeltaRedactor

CHUNK_KINDS = {
    "agent_message_chunk": "assistant",
    "agent_thought_chunk": "thinking",
    "user_message_chunk": "user",
    "user_message": "user",
}
# Updates that change nothing a reader of the session follows.
QUIET_UPDATES = frozenset(
    {
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "config_options_update",
    }
)
# Cut short by a limit or the user is `stopped`; unknown future reasons are taken as normal ends.
STOP_STATUS: dict[str, TurnStatus] = {
    "end_turn": "ok",
    "cancelled": "stopped",
    "max_tokens": "stopped",
    "max_turn_requests": "stopped",
    "refusal": "failed",
    "failed": "failed",
}
STATES = {"running": "running", "requires_action": "waiting", "idle": "idle"}


@dataclass
class _Chunks:
    kind: str  # assistant / thinking / user
    message_id: str
    parent: str | None
    ts: str
    parts: list[str] = field(default_factory=list)
    live: DeltaRedactor | None = None


@dataclass
class _Session:
    id: str
    turns: AcpTurns = field(default_factory=AcpTurns)
    chunks: _Chunks | None = None
    tools: dict[str, ToolCall] = field(default_factory=dict)
    held: ToolCall | None = None  # completed; its output may still be enriched
    terminals: dict[str, list[str]] = field(default_factory=dict)
    prompt_texts: list[str] = field(default_factory=list)  # prompts of the open turn
    anonymous: int = 0


class AcpConverter:
    agent = "acp"

    def __init__(self, default_session: str) -> None:
        self.default_session = default_session
        self.sessions: dict[str, _Session] = {}
        self.last_session = default_session
        self.model: str | None = None
        self.run_status: str | None = None

    def _session(self, session_id: str | None) -> _Session:
        sid = session_id or self.last_session
        self.last_session = sid
        if sid not in self.sessions:
            self.sessions[sid] = _Session(sid)
        return self.sessions[sid]

    # --- entry points ---

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        kind, method, payload = _normalize(record)
        ts = _text(record.get("ts")) or now_iso()
        if method == "session/update" and kind == "notification":
            s = self._session(_text(payload.get("sessionId")) or None)
            return self._update(s, _dict(payload.get("update")), ts)
        if method == "session/prompt" and kind == "request":
            s = self._session(_text(payload.get("sessionId")) or None)
            return self._prompt(s, payload, ts)
        if method == "session/prompt" and kind == "response":
            s = self._session(_text(payload.get("sessionId")) or None)
            if "error" in record or payload.get("error") is not None:
                return self._stop(s, "failed", {}, ts)
            if "stopReason" not in payload:
                return []  # ACP v2 acknowledges the prompt at once; the stop comes as an update
            return self._stop(s, _text(payload.get("stopReason")), _dict(payload.get("usage")), ts)
        if method == "session/request_permission":
            s = self._session(_text(payload.get("sessionId")) or None)
            call = _dict(payload.get("toolCall")) or _dict(
                _dict(payload.get("subject")).get("toolCall")
            )
            out = self._tool_update(s, call, ts) if call else []
            tool = s.tools.get(_text(call.get("toolCallId")))
            if tool is not None and not tool.shown:
                out += self._show_tool(s, tool)
            return out + [Emitted(s.id, state="waiting")]
        if method in ("session/new", "session/load") and kind == "response":
            self._note_model(payload)
        return []

    def finish(self) -> list[Emitted]:
        out: list[Emitted] = []
        for s in self.sessions.values():
            out += self._flush(s)
        return out

    # --- session/update ---

    def _update(self, s: _Session, update: dict[str, Any], ts: str) -> list[Emitted]:
        kind = _text(update.get("sessionUpdate"))
        meta = _dict(_dict(update.get("_meta")).get("claudeCode"))
        parent = _text(meta.get("parentToolUseId")) or None
        if kind in ("tool_call", "tool_call_update"):
            tool_id = _text(update.get("toolCallId"))
            out = [] if s.held is not None and s.held.id == tool_id else self._flush_held(s)
            return out + self._flush_chunks(s) + self._tool_update(s, update, ts)
        if kind == "terminal_update":
            self._terminal(s, update)
            return []
        out = self._flush_held(s)
        chunk_kind = CHUNK_KINDS.get(kind)
        if chunk_kind is not None:
            return out + self._chunk(s, chunk_kind, update, parent, ts)
        if kind in ("usage_update", "state_update"):
            s.turns.note_usage(update)
            self.model = _text(_dict(update.get("_meta")).get("_claude/model")) or self.model
            if kind == "state_update":
                out += self._flush_chunks(s)
                state = STATES.get(_text(update.get("state")))
                if update.get("stopReason") is not None:
                    usage = _dict(update.get("usage"))
                    return out + self._stop(s, _text(update.get("stopReason")), usage, ts)
                if state is not None:
                    out.append(Emitted(s.id, state=state))
            return out
        out += self._flush_chunks(s)
        if kind in ("plan", "plan_update"):
            plan = _dict(update.get("plan"))
            entries = plan.get("entries") if plan else update.get("entries")
            event = PlanEvent(ts=ts, parent_tool_use_id=parent, entries=_plan_entries(entries))
            return out + self._emit(s, [event])
        if kind == "session_info_update":
            title = _text(update.get("title"))
            return out + ([Emitted(s.id, title=redact_text(title))] if title else [])
        if kind in QUIET_UPDATES:
            return out
        content = f"Unrecognized ACP session update {kind!r}"
        return out + self._emit(s, [SystemEvent(ts=ts, subtype="unknown", content=content)])

    def _chunk(
        self, s: _Session, kind: str, update: dict[str, Any], parent: str | None, ts: str
    ) -> list[Emitted]:
        content = update.get("content")
        text = block_text(content)
        message_id = _text(update.get("messageId"))
        run = s.chunks
        out: list[Emitted] = []
        same = run is not None and run.kind == kind and run.message_id == message_id
        if kind == "user" and update.get("sessionUpdate") == "user_message":
            same = False  # v2 sends each user message whole
        if not same:
            out += self._flush_chunks(s)
            if kind != "user":
                out += self._flush_tools(s)
            if not message_id:
                s.anonymous += 1
            run = _Chunks(kind, message_id, parent, ts)
            if kind == "assistant":
                run.live = DeltaRedactor()
            s.chunks = run
        assert run is not None
        run.parts.append(text)
        if run.live is not None:
            piece = run.live.push(text)
            if piece:
                out.append(Emitted(s.id, s.turns.delta(self._segment(s, run), piece, parent, ts)))
        return out

    def _segment(self, s: _Session, run: _Chunks) -> str:
        return f"acp:{run.message_id or s.anonymous}"

    def _flush_chunks(self, s: _Session) -> list[Emitted]:
        run, s.chunks = s.chunks, None
        if run is None:
            return []
        text = "".join(run.parts)
        out: list[Emitted] = []
        if run.live is not None:
            tail = run.live.finish()
            if tail:
                segment = self._segment(s, run)
                out.append(Emitted(s.id, s.turns.delta(segment, tail, run.parent, run.ts)))
        if not text.strip():
            return out
        if run.kind == "user":
            if run.parent is None and text.strip() in s.prompt_texts:
                return out  # the prompt request already showed it
            return out + self._user(s, text, run.ts, run.parent)
        live = self._segment(s, run) if run.live is not None else None
        item = s.turns.text_item(run.kind, redact_text(text), run.ts, run.parent, live)
        return out + self._emit(s, [item])

    # --- prompts and turns ---

    def _prompt(self, s: _Session, params: dict[str, Any], ts: str) -> list[Emitted]:
        text = block_text(params.get("prompt"))
        out = self._flush(s)
        if not text.strip():
            return out
        out += self._user(s, text, ts, None)
        s.prompt_texts.append(text.strip())
        return out + [Emitted(s.id, state="running")]

    def _user(self, s: _Session, text: str, ts: str, parent: str | None) -> list[Emitted]:
        out: list[Emitted] = []
        if parent is None:
            out += self._flush_tools(s) + self._flush_held(s)
            closed = s.turns.close("stopped", {}, ts, self.model)
            out += [Emitted(s.id, closed)] if closed is not None else []
            s.prompt_texts = []
            s.turns.open(ts)
        first = s.turns.count == 1 and parent is None
        out.append(Emitted(s.id, s.turns.user_item(redact_text(text), ts, parent)))
        if first:
            out.append(Emitted(s.id, title=" ".join(redact_text(text).split())[:80]))
        return out

    def _stop(self, s: _Session, reason: str, usage: dict[str, Any], ts: str) -> list[Emitted]:
        out = self._flush(s)
        closed = s.turns.close(STOP_STATUS.get(reason, "ok"), usage, ts, self.model)
        if closed is None:
            return out
        self.run_status = "failed" if closed.status == "failed" else "ok"
        return out + [Emitted(s.id, closed), Emitted(s.id, state="idle")]

    def _note_model(self, payload: dict[str, Any]) -> None:
        models = _dict(payload.get("models"))
        self.model = _text(models.get("currentModelId")) or self.model
        for option in _list(payload.get("configOptions")):
            if isinstance(option, dict) and option.get("category") == "model":
                self.model = _text(option.get("currentValue")) or self.model

    # --- tool calls ---

    def _tool_update(self, s: _Session, update: dict[str, Any], ts: str) -> list[Emitted]:
        tool_id = _text(update.get("toolCallId"))
        if not tool_id:
            return []
        tool = s.tools.get(tool_id)
        if tool is None:
            tool = ToolCall(tool_id, ts)
            s.tools[tool_id] = tool
        tool.merge(update)
        out: list[Emitted] = []
        if tool.status != "pending" and not tool.shown:
            out += self._show_tool(s, tool)
        if tool.finished and not tool.result_shown and s.held is not tool:
            out += self._flush_held(s)
            tool.finished_ts = tool.finished_ts or ts
            s.held = tool
        return out

    def _show_tool(self, s: _Session, tool: ToolCall) -> list[Emitted]:
        """Show `tool`, after any call seen before it that is still unshown (a sub-agent's
        own call stays pending while its children run, but it came first)."""
        items: list[SessionItem] = []
        for other in s.tools.values():
            if not other.shown:
                other.shown = True
                items.append(other.use_item())
            if other is tool:
                break
        return self._emit(s, items, flush_tools=False)

    def _flush_tools(self, s: _Session) -> list[Emitted]:
        out: list[Emitted] = []
        for tool in s.tools.values():
            if not tool.shown:
                out += self._show_tool(s, tool)
        return out

    def _flush_held(self, s: _Session) -> list[Emitted]:
        tool, s.held = s.held, None
        if tool is None or tool.result_shown:
            return []
        tool.result_shown = True
        output = tool.output("".join(s.terminals.get(tool.id, [])))
        return self._emit(s, [tool.result_item(redact_text(output))], flush_tools=False)

    def _terminal(self, s: _Session, update: dict[str, Any]) -> None:
        terminal = _text(update.get("terminalId"))
        data = _text(_dict(update.get("output")).get("data"))
        if terminal and data:
            s.terminals.setdefault(terminal, []).append(_b64(data))

    # --- emission ---

    def _flush(self, s: _Session) -> list[Emitted]:
        return self._flush_chunks(s) + self._flush_tools(s) + self._flush_held(s)

    def _emit(
        self, s: _Session, items: list[SessionItem], *, flush_tools: bool = True
    ) -> list[Emitted]:
        out = self._flush_tools(s) if flush_tools else []
        for item in items:
            s.turns.ensure_open(item.ts)
            out.append(Emitted(s.id, item))
        return out


def _normalize(record: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(kind, method, payload) of an envelope or a raw JSON-RPC message."""
    if "kind" in record and "payload" in record:
        payload = _dict(record.get("payload"))
        if "error" in record:
            payload = {**payload, "error": record["error"]}
        return _text(record.get("kind")), _text(record.get("method")), payload
    method = _text(record.get("method"))
    if method:
        kind = "request" if "id" in record else "notification"
        return kind, method, _dict(record.get("params"))
    result = _dict(record.get("result"))
    if "stopReason" in result:
        return "response", "session/prompt", result
    return "response", "", result


def _plan_entries(entries: Any) -> list[PlanEntry]:
    out: list[PlanEntry] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            out.append(
                PlanEntry(
                    content=redact_text(_text(entry.get("content"))),
                    status=_text(entry.get("status")) or "pending",
                    priority=_text(entry.get("priority")) or "medium",
                )
            )
    return out


def _b64(data: str) -> str:
    import base64
    import binascii

    try:
        return base64.b64decode(data, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return data
