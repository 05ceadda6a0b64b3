"""Codex rollout records (`~/.codex/sessions/**/rollout-*.jsonl`) → canonical items (pure).

Format notes, from real rollouts (Codex CLI 0.2x to 0.128, CLI and Desktop):
- Each line is `{"timestamp", "type", "payload"}`: `session_meta` (id, cwd, `git.branch`),
  `turn_context` (model), `response_item` (what the model saw and said), `event_msg` (what the UI
  showed), `compacted`. Early rollouts wrote bare response items with no wrapper.
- The same thing is often written twice: a prompt as a `user` message item and a `user_message`
  event; a reply as an `assistant` message and an `agent_message` event; a reasoning summary and
  an `agent_reasoning` event. Either may come first or be missing, so each text is shown once:
  a text from one channel cancels one equal pending text from the other.
- `user` message items also carry injected context (`<environment_context>`, AGENTS.md
  instructions): not typed by the user, not shown. Reasoning that is only `encrypted_content`
  has nothing readable and gives no item.
- `token_count` events: turn tokens, cost and context figures (codex/tokens.py).
- `task_complete` / `turn_aborted` close a turn when persisted (aborted: `stopped`, with its
  `reason`); otherwise the next prompt does.
- A sub-agent thread is a rollout of its own whose `session_meta.source` is
  `{"subagent": {"thread_spawn": {"parent_thread_id", "depth", "agent_nickname"…}}}`. A forked
  one then repeats its parent's `session_meta` and history before its own first `turn_context`:
  that copy is not shown (it is the parent's session, listed on its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import (
    AssistantEvent,
    ErrorEvent,
    PlanEvent,
    SessionItem,
    SystemEvent,
    ThinkingEvent,
    ToolResultEvent,
    ToolUseEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.redact import redact_text
from sidemirror.sources.codex.tokens import TokenCounts
from sidemirror.sources.codex.tools import (
    kind_of,
    output_text,
    parse_arguments,
    patch_file_diffs,
    plan_entries,
    summary,
    tool_name,
)
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import one_line

TITLE_CHARS = 80
_DESKTOP_REQUEST = "## My request for Codex:"
_INJECTED = re.compile(r"^\s*(?:<([a-z_][a-z0-9_ -]*)>.*</\1>\s*$|# AGENTS\.md instructions)", re.S)
# UI-only events: their content is in response items, or they say nothing a reader needs.
_QUIET_EVENTS = frozenset(
    {"task_started", "context_compacted", "entered_review_mode", "exited_review_mode"}
)


@dataclass
class _Turn:
    number: int
    started: str
    tokens_at_start: dict[str, int]
    prompt: str | None = None
    last_ts: str = ""
    quiet_since_prompt: bool = True  # nothing but the prompt yet (its echo may follow)
    open_calls: set[str] = field(default_factory=set)
    ended_on_text: bool = False
    # Texts shown once though written twice: (kind, text) -> channels still owed a duplicate.
    pending: dict[tuple[str, str], list[str]] = field(default_factory=dict)


class CodexParser:
    def __init__(self) -> None:
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.model: str | None = None
        self.first_prompt: str | None = None
        self.started_at: str | None = None
        self.errors = 0
        self.turns = 0
        self.current: _Turn | None = None
        self.tokens = TokenCounts()
        self._calls: dict[str, tuple[str, str]] = {}  # call_id -> (name, ts)
        self.parent_thread_id: str | None = None  # set on a sub-agent's rollout
        self.agent_nickname: str | None = None
        self._inherited = False
        self._web = 0

    def feed(self, record: Any) -> list[SessionItem]:
        if not isinstance(record, dict):
            self.errors += 1
            return []
        ts = _text(record.get("timestamp"))
        kind = record.get("type")
        payload = _dict(record.get("payload"))
        if "payload" not in record:  # early rollouts: bare items, and a bare meta line first
            if kind is None and "id" in record:
                kind, payload = "session_meta", record
            else:
                kind, payload = "response_item", record
        self.started_at = self.started_at or ts or None
        if kind == "session_meta":
            self._meta(payload)
            return []
        if self._inherited and kind != "turn_context":
            return []  # a forked sub-agent's copy of its parent's history
        if kind == "turn_context":
            self._inherited = False
            self.model = _text(payload.get("model")) or self.model
            self.cwd = self.cwd or _text(payload.get("cwd")) or None
            return []
        if kind == "response_item":
            return self._response_item(payload, ts)
        if kind == "event_msg":
            return self._event(payload, ts)
        if kind == "compacted":
            return self._shown(
                [SystemEvent(ts=ts, subtype="compact", content="Conversation compacted")]
            )
        return self._shown(
            [SystemEvent(ts=ts, subtype="unknown", content=f"Unrecognized record type {kind!r}")]
        )

    @property
    def title(self) -> str | None:
        """The first prompt; a sub-agent's is prefixed with its nickname."""
        if self.agent_nickname and self.first_prompt:
            return f"{self.agent_nickname}: {self.first_prompt}"
        return self.first_prompt

    def _meta(self, payload: dict[str, Any]) -> None:
        other = _text(payload.get("id"))
        if self.parent_thread_id is not None and other and other != self.session_id:
            # A forked sub-agent repeats its parent's meta and history after its own meta; its
            # own work starts at its first `turn_context`.
            self._inherited = True
            return
        if self.session_id is None:  # a forked child repeats its parent's meta after its own
            spawn = _dict(_dict(_dict(payload.get("source")).get("subagent")).get("thread_spawn"))
            parent = _text(spawn.get("parent_thread_id")) or _text(payload.get("parent_thread_id"))
            self.parent_thread_id = parent or None
            nickname = _text(spawn.get("agent_nickname")) or _text(payload.get("agent_nickname"))
            self.agent_nickname = nickname or None
        self.session_id = self.session_id or _text(payload.get("id")) or None
        self.cwd = self.cwd or _text(payload.get("cwd")) or None
        self.git_branch = _text(_dict(payload.get("git")).get("branch")) or self.git_branch

    # --- turns ---

    def _open(self, ts: str, prompt: str | None) -> None:
        self.turns += 1
        self.current = _Turn(self.turns, ts, dict(self.tokens.totals), prompt, last_ts=ts)

    def _close(self, status: TurnStatus, ts: str, reason: str | None = None) -> list[SessionItem]:
        turn, self.current = self.current, None
        if turn is None:
            return []
        closed = self.tokens.turn_complete(
            turn.tokens_at_start,
            number=turn.number,
            started=turn.started,
            ts=ts,
            model=self.model,
            status=status,
            reason=reason,
        )
        return [closed]

    def _prompt(self, text: str, ts: str) -> list[SessionItem]:
        turn = self.current
        if turn is not None and turn.quiet_since_prompt and turn.prompt == text.strip():
            return []  # the same prompt through the other channel
        items: list[SessionItem] = []
        if turn is not None:
            finished = turn.ended_on_text and not turn.open_calls
            items += self._close("ok" if finished else "stopped", turn.last_ts or ts)
        self._open(ts, text.strip())
        if self.first_prompt is None:
            # Codex Desktop prefixes mentioned files; the title is what was asked.
            asked = text.partition(_DESKTOP_REQUEST)[2] or text
            self.first_prompt = redact_text(one_line(asked))[:TITLE_CHARS]
        items.append(UserEvent(ts=ts, content=redact_text(text)))
        return items

    def _shown(self, items: list[SessionItem], *, text_end: bool = False) -> list[SessionItem]:
        if items:
            if self.current is None:
                self._open(items[0].ts, None)
            assert self.current is not None
            self.current.quiet_since_prompt = False
            self.current.ended_on_text = text_end
            self.current.last_ts = items[-1].ts or self.current.last_ts
        return items

    def _once(self, kind: str, text: str, channel: str) -> bool:
        """True the first time a text is seen; its copy from the other channel returns False."""
        if self.current is None:
            return True
        key = (kind, text.strip())
        owed = self.current.pending.setdefault(key, [])
        if owed and owed[0] != channel:
            owed.pop(0)
            return False
        owed.append(channel)
        return True

    # --- response items ---

    def _response_item(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        kind = p.get("type")
        if kind == "message":
            text = "\n".join(
                _text(c.get("text")) for c in _list(p.get("content")) if isinstance(c, dict)
            )
            role = p.get("role")
            if role == "user":
                if not text.strip() or _INJECTED.match(text):
                    return []
                return self._prompt(text, ts)
            if role == "assistant" and text.strip():
                return self._assistant(text, ts, "item")
            return []
        if kind == "reasoning":
            parts = [_text(s.get("text")) for s in _list(p.get("summary")) if isinstance(s, dict)]
            if not any(parts):
                parts = [
                    _text(c.get("text")) for c in _list(p.get("content")) if isinstance(c, dict)
                ]
            text = "\n\n".join(t for t in parts if t.strip())
            return self._thinking(text, ts, "item") if text else []
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            return self._call(p, ts)
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self._output(p, ts)
        if kind in ("ghost_snapshot", "compaction"):
            return []
        content = f"Unrecognized response item {kind!r}"
        return self._shown([SystemEvent(ts=ts, subtype="unknown", content=content)])

    def _assistant(self, text: str, ts: str, channel: str) -> list[SessionItem]:
        if not self._once("assistant", text, channel):
            return []
        return self._shown([AssistantEvent(ts=ts, content=redact_text(text))], text_end=True)

    def _thinking(self, text: str, ts: str, channel: str) -> list[SessionItem]:
        if not self._once("thinking", text, channel):
            return []
        ended = self.current.ended_on_text if self.current is not None else False
        return self._shown([ThinkingEvent(ts=ts, content=redact_text(text))], text_end=ended)

    def _call(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        kind = p.get("type")
        call_id = _text(p.get("call_id")) or _text(p.get("id"))
        if kind == "web_search_call":
            action = _dict(p.get("action"))
            self._web += 1
            call_id = call_id or f"web_search_{self._web}"
            use = ToolUseEvent(
                ts=ts,
                tool_use_id=call_id,
                name="web_search",
                kind="fetch",
                input=redact_text(summary("web_search", action)),
            )
            done = ToolResultEvent(
                ts=ts,
                tool_use_id=call_id,
                name="web_search",
                output=_text(p.get("status")),
            )
            return self._shown([use, done])
        args: Any
        if kind == "local_shell_call":
            name, args = "local_shell", _dict(p.get("action"))
        elif kind == "custom_tool_call":
            name, args = tool_name(p), p.get("input")
        else:
            name, args = tool_name(p), parse_arguments(p.get("arguments"))
        if not call_id or call_id in self._calls:
            return []
        self._calls[call_id] = (name, ts)
        if name == "update_plan":
            entries = plan_entries(args)
            for entry in entries:
                entry.content = redact_text(entry.content)
            return self._shown([PlanEvent(ts=ts, entries=entries)])
        diffs = patch_file_diffs(name, args)
        items = self._shown(
            [
                ToolUseEvent(
                    ts=ts,
                    tool_use_id=call_id,
                    name=name,
                    kind=kind_of(name),
                    input=redact_text(summary(name, args)),
                    diff=diffs[0] if diffs else None,
                    diffs=diffs if len(diffs) > 1 else None,  # a patch of several files
                )
            ]
        )
        assert self.current is not None
        self.current.open_calls.add(call_id)
        return items

    def _output(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        call_id = _text(p.get("call_id"))
        name, started = self._calls.get(call_id, ("", ""))
        if self.current is not None:
            self.current.open_calls.discard(call_id)
        if name == "update_plan":
            return []  # the plan item stands for the call
        text, is_error, duration = output_text(p.get("output"))
        if duration is None and started and ts:
            duration = ms_between(started, ts)
        result = ToolResultEvent(
            ts=ts,
            tool_use_id=call_id,
            name=name,
            output=redact_text(text),
            is_error=is_error,
            duration_ms=duration,
        )
        return self._shown([result])

    # --- events ---

    def _event(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        kind = p.get("type")
        if kind == "user_message":
            text = _text(p.get("message"))
            if _text(p.get("kind")) not in ("", "plain") or not text.strip():
                return []
            return self._prompt(text, ts)
        if kind == "agent_message":
            text = _text(p.get("message"))
            return self._assistant(text, ts, "event") if text.strip() else []
        if kind == "agent_reasoning":
            text = _text(p.get("text"))
            return self._thinking(text, ts, "event") if text.strip() else []
        if kind in ("token_count", "task_started"):
            self.tokens.event(kind, p)
            return []
        if kind == "task_complete":
            return self._close("ok", ts)
        if kind == "turn_aborted":
            return self._close("stopped", ts, _text(p.get("reason")) or "aborted")
        if kind in ("error", "stream_error"):
            message = redact_text(_text(p.get("message")) or "error")
            return self._shown([ErrorEvent(ts=ts, message=message)])
        return []
