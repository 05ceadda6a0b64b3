"""ACP (Agent Client Protocol) traffic → canonical items.

Records come in any of the envelopes `envelope.py` reads; each session's state and the order its
items are shown in live in `session.py`. What each `session/update` kind becomes is listed in
`updates.UPDATE_KINDS` (one handler each, below). ACP v1 (the prompt response's `stopReason`) and
the v2 draft (`state_update` with `stopReason` and `usage`) are both read. Updates that are facts
about the session rather than the conversation (usage, title, commands) flush nothing, so they
never cut a run of chunks in two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.models import ErrorEvent, SystemEvent, ToolResultEvent, TurnStatus
from sidemirror.core.redact import redact_text
from sidemirror.sources.acp import updates
from sidemirror.sources.acp.content import b64_text, block_attachments, block_text
from sidemirror.sources.acp.envelope import Message, error_text, read_message
from sidemirror.sources.acp.session import AcpSession, RunInfo
from sidemirror.sources.base import Emitted
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text

CHUNK_KINDS = {
    "agent_message_chunk": "assistant",
    "agent_message": "assistant",
    "agent_thought_chunk": "thinking",
    "agent_thought": "thinking",
    "user_message_chunk": "user",
    "user_message": "user",
}
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

Update = dict[str, Any]
Handler = Callable[["AcpConverter", AcpSession, Update, str, str | None], list[Emitted]]


def _internal(obj: dict[str, Any]) -> bool:
    """A prompt a client sent for itself (e.g. Multica's AskUserQuestion answers)."""
    return obj.get("_internal") is True or _dict(obj.get("_meta")).get("_internal") is True


class AcpConverter:
    agent = "acp"

    def __init__(self, default_session: str) -> None:
        self.default_session = default_session
        self.sessions: dict[str, AcpSession] = {}
        self.last_session = default_session
        self.run = RunInfo()
        self.requests: dict[str, str] = {}  # JSON-RPC id → method, to name bare responses

    @property
    def model(self) -> str | None:
        return self.run.model

    @property
    def run_status(self) -> str | None:
        """ok / failed / stopped: how the last turn that closed ended (None before any)."""
        return self.run.status

    def _session(self, session_id: str | None) -> AcpSession:
        sid = session_id or self.last_session
        self.last_session = sid
        if sid not in self.sessions:
            self.sessions[sid] = AcpSession(sid, self.run)
        return self.sessions[sid]

    # --- entry points ---

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        msg = read_message(record)
        ts = msg.ts or now_iso()
        payload, method = msg.payload, msg.method
        if msg.kind == "request" and msg.id:
            self.requests[msg.id] = method
        elif msg.kind == "response" and not method and msg.id:
            method = self.requests.pop(msg.id, "")
        s = self._session(_text(payload.get("sessionId")) or None)
        if method == "session/update" and msg.kind == "notification":
            update = _dict(payload.get("update"))
            number = next(
                (n for n in (update, payload, record) if n.get("sequenceNumber") is not None), {}
            ).get("sequenceNumber")
            if number is not None:  # a stored client's numbering, on whichever level it put it
                update = {**update, "sequenceNumber": number}
            return self._update(s, update, ts)
        if method == "session/prompt":
            return self._prompt_message(s, msg, ts)
        if method == "session/request_permission":
            call = _dict(payload.get("toolCall")) or _dict(
                _dict(payload.get("subject")).get("toolCall")
            )
            out = s.tool_update(call, ts) if call else []
            tool = s.tools.get(_text(call.get("toolCallId")))
            if tool is not None and not tool.shown:
                out += s.show_tool(tool)
            return out + [Emitted(s.id, state="waiting")]
        if method in ("session/new", "session/load", "session/resume") and msg.kind == "response":
            models = _dict(payload.get("models"))
            options = _list(payload.get("configOptions"))
            model = updates.model_option(options) or _text(models.get("currentModelId"))
            self.run.model = model or self.run.model
            s.modes.learn(payload)
        return []

    def finish(self) -> list[Emitted]:
        out: list[Emitted] = []
        for s in self.sessions.values():
            out += s.flush()
        return out

    # --- prompts and the end of a turn ---

    def _prompt_message(self, s: AcpSession, msg: Message, ts: str) -> list[Emitted]:
        payload = msg.payload
        if msg.kind == "request":
            return self._prompt(s, payload, ts)
        if payload.get("error") is not None:
            return self._fail(s, error_text(payload["error"]), "error", ts)
        if "stopReason" not in payload:
            return []  # ACP v2 acknowledges the prompt at once; the stop comes as an update
        return self._stop(s, _text(payload.get("stopReason")), _dict(payload.get("usage")), ts)

    def _prompt(self, s: AcpSession, params: dict[str, Any], ts: str) -> list[Emitted]:
        prompt = params.get("prompt")
        text = block_text(prompt)
        if _internal(params):
            s.hidden_texts.add(text.strip())  # its echo stays hidden too
            return []
        media = block_attachments(prompt)
        out = s.flush()
        if not text.strip() and not media:
            return out
        out += s.user(text, ts, None, media)
        s.prompt_texts.append(text.strip())
        return out + [Emitted(s.id, state="running")]

    def _stop(self, s: AcpSession, reason: str, usage: Update, ts: str) -> list[Emitted]:
        status = STOP_STATUS.get(reason, "ok")
        self.run.status = status
        out = s.flush() + s.close_turn(status, usage, ts, reason or None)
        return out + [Emitted(s.id, state="idle")]

    def _fail(self, s: AcpSession, message: str, reason: str, ts: str) -> list[Emitted]:
        """An error that ended the agent's work: shown with its text, the turn closed `failed`
        with `reason` kept as its `stop_reason`."""
        self.run.status = "failed"
        out = s.flush() + s.emit(
            [ErrorEvent(ts=ts, message=redact_text(message))], opens_turn=False
        )
        return out + s.close_turn("failed", {}, ts, reason) + [Emitted(s.id, state="idle")]

    # --- session/update: one handler per kind (updates.UPDATE_KINDS says what each does) ---

    def _update(self, s: AcpSession, update: Update, ts: str) -> list[Emitted]:
        kind = _text(update.get("sessionUpdate"))
        meta = _dict(_dict(update.get("_meta")).get("claudeCode"))
        parent = _text(meta.get("parentToolUseId")) or None
        handler = HANDLERS.get(kind)
        if handler is not None:
            return handler(self, s, update, ts, parent)
        content = redact_text(f"Unrecognized ACP session update {kind!r}")
        return s.line(SystemEvent(ts=ts, subtype="unknown", content=content))

    def _on_tool(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        tool_id = _text(u.get("toolCallId"))
        out = [] if s.held is not None and s.held.id == tool_id else s.flush_held()
        return out + s.flush_chunks() + s.tool_update(u, ts)

    def _on_tool_chunk(self, s: AcpSession, u: Update, _ts: str, _p: str | None) -> list[Emitted]:
        tool = s.tools.get(_text(u.get("toolCallId")))
        if tool is not None:
            tool.append_content(u.get("content"))
        return []

    def _on_terminal(self, s: AcpSession, u: Update, _ts: str, _p: str | None) -> list[Emitted]:
        terminal = _text(u.get("terminalId"))
        if u.get("sessionUpdate") == "terminal_output_chunk":
            data = _text(u.get("data"))
            if terminal and data:
                s.terminals.setdefault(terminal, []).append(b64_text(data))
            return []
        data = _text(_dict(u.get("output")).get("data"))
        if terminal and data:
            s.terminals[terminal] = [b64_text(data)]  # a snapshot: it replaces the output
        return []

    def _on_chunk(self, s: AcpSession, u: Update, ts: str, parent: str | None) -> list[Emitted]:
        kind = CHUNK_KINDS[_text(u.get("sessionUpdate"))]
        if kind == "user" and _internal(u):
            s.hidden_texts.add(block_text(u.get("content")).strip())
            return []
        return s.flush_held() + s.chunk(kind, u, parent, ts)

    def _on_usage(self, s: AcpSession, u: Update, _ts: str, _p: str | None) -> list[Emitted]:
        s.turns.note_usage(u)
        self.run.model = _text(_dict(u.get("_meta")).get("_claude/model")) or self.run.model
        return []

    def _on_state(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        if u.get("stopReason") is not None:
            return self._stop(s, _text(u.get("stopReason")), _dict(u.get("usage")), ts)
        state = STATES.get(_text(u.get("state")))
        out = s.flush_held() + s.flush_chunks()
        return out + ([Emitted(s.id, state=state)] if state is not None else [])

    def _on_plan(self, s: AcpSession, u: Update, ts: str, parent: str | None) -> list[Emitted]:
        out = s.flush_held() + s.flush_chunks()
        return out + s.emit([updates.plan_item(u, parent, ts)])

    def _on_quiet(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        return []

    def _on_mode(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        mode = _text(u.get("currentModeId")) or _text(u.get("modeId"))
        return s.line(s.modes.change(mode, ts))

    def _on_config(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        options = _list(u.get("configOptions"))
        self.run.model = updates.model_option(options) or self.run.model
        return s.line(s.modes.options(options, ts))

    def _on_info(self, s: AcpSession, u: Update, _ts: str, _p: str | None) -> list[Emitted]:
        title = " ".join(redact_text(_text(u.get("title"))).split())
        return [Emitted(s.id, title=title)] if title else []

    def _on_notice(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        return s.line(updates.notice_item(u, ts))

    def _on_compaction(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        if u.get("sessionUpdate") == "compaction_summary_chunk":
            s.compactions.chunk(u)
            return []
        return [e for item in s.compactions.update(u, ts) for e in s.line(item)]

    def _on_error(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        reason = _text(u.get("errorType")) or "error"
        return self._fail(s, updates.error_message_item(u, ts).message, reason, ts)

    def _on_answer(self, s: AcpSession, u: Update, ts: str, _p: str | None) -> list[Emitted]:
        tool_id = _text(u.get("toolCallId"))
        text = redact_text(updates.answers_text(_dict(u.get("response"))))
        tool = s.tools.get(tool_id)
        if tool is None:
            item = ToolResultEvent(ts=ts, tool_use_id=tool_id, name="AskUserQuestion", output=text)
            return s.flush_held() + s.flush_chunks() + s.emit([item])
        if tool.result_shown:
            return []
        tool.raw_output, tool.status = text, "completed"
        return self._on_tool(s, {"toolCallId": tool_id}, ts, None) + s.flush_held()


HANDLERS: dict[str, Handler] = {
    **{kind: AcpConverter._on_chunk for kind in CHUNK_KINDS},
    "tool_call": AcpConverter._on_tool,
    "tool_call_update": AcpConverter._on_tool,
    "tool_call_content_chunk": AcpConverter._on_tool_chunk,
    "terminal_update": AcpConverter._on_terminal,
    "terminal_output_chunk": AcpConverter._on_terminal,
    "plan": AcpConverter._on_plan,
    "plan_update": AcpConverter._on_plan,
    "plan_removed": AcpConverter._on_plan,
    "available_commands_update": AcpConverter._on_quiet,
    "current_mode_update": AcpConverter._on_mode,
    "config_option_update": AcpConverter._on_config,
    "session_info_update": AcpConverter._on_info,
    "usage_update": AcpConverter._on_usage,
    "state_update": AcpConverter._on_state,
    "notice": AcpConverter._on_notice,
    "compaction_update": AcpConverter._on_compaction,
    "compaction_summary_chunk": AcpConverter._on_compaction,
    "error_message": AcpConverter._on_error,
    "askuserquestion_response": AcpConverter._on_answer,
}
