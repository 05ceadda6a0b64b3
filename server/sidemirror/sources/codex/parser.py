"""Codex rollout records (`~/.codex/sessions/**/rollout-*.jsonl`) → canonical items (pure).

Format notes, from real rollouts (Codex CLI 0.2x to 0.128, CLI and Desktop):
- Each line is `{"timestamp", "type", "payload"}`: `session_meta` (id, cwd, `git.branch`),
  `turn_context` (model), `response_item` (what the model saw and said), `event_msg` (what the UI
  showed), `compacted`. Early rollouts wrote bare response items with no wrapper.
- The same thing is often written twice: a prompt as a `user` message item and a `user_message`
  event; a reply as an `assistant` message and an `agent_message` event; a reasoning summary and
  an `agent_reasoning` event. Either may come first or be missing, and the two texts may differ,
  so the copies are matched by place (codex/channels.py): the copy from the other channel that
  follows before anything else is shown is the same text.
- `user` message items also carry injected context (`<environment_context>`, AGENTS.md
  instructions): not typed by the user, never a prompt (codex/channels.py). In a wrapped
  rollout a user item is held until the next record that shows something says what it is: its
  `user_message` event (the prompt), another user item or a turn that has its prompt (context),
  or model output in a turn with no prompt yet (the prompt: a build that wrote no event).
  Reasoning that is only `encrypted_content` has nothing readable and gives no item.
- Commands: `exec_command_end` events hold a command's real output, exit code and duration;
  a card takes them from there (codex/commands.py). `write_stdin` shows what it typed.
- `token_count` events: turn tokens, cost and context figures (codex/tokens.py).
- `task_complete` / `turn_aborted` close a turn when persisted (aborted: `stopped`, with its
  `reason`); otherwise the next prompt does.
- A sub-agent thread is a rollout of its own whose `session_meta.source` is
  `{"subagent": {"thread_spawn": {"parent_thread_id", "depth", "agent_nickname"…}}}`. A forked
  one then repeats its parent's `session_meta` and history before its own first `turn_context`:
  that copy is not shown (it is the parent's session, listed on its own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.models import (
    AssistantEvent,
    ErrorEvent,
    SessionItem,
    SystemEvent,
    ThinkingEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.redact import redact_text
from sidemirror.sources.codex.calls import ToolCalls
from sidemirror.sources.codex.channels import (
    EVENT,
    ITEM,
    Echoes,
    is_injected,
    shows,
    text_parts,
)
from sidemirror.sources.codex.tokens import TokenCounts
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import one_line

TITLE_CHARS = 80
_DESKTOP_REQUEST = "## My request for Codex:"
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
    prompt_channel: str | None = None
    echoed: bool = False  # the prompt's copy from the other channel came
    last_ts: str = ""
    quiet_since_prompt: bool = True  # nothing but the prompt yet (its echo may follow)
    open_calls: set[str] = field(default_factory=set)
    ended_on_text: bool = False


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
        self.calls = ToolCalls()
        self.parent_thread_id: str | None = None  # set on a sub-agent's rollout
        self.agent_nickname: str | None = None
        self._inherited = False
        self._bare = False  # an early rollout: bare response items, no events
        self._held: tuple[str, str] | None = None  # a user item not known yet to be the prompt
        self._echoes = Echoes()

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
                self._bare = True
        self.started_at = self.started_at or ts or None
        if kind == "session_meta":
            self._meta(payload)
            return []
        if self._inherited and kind != "turn_context":
            return []  # a forked sub-agent's copy of its parent's history
        return self._held_before(kind, payload) + self._record(kind, payload, ts)

    def _record(self, kind: Any, payload: dict[str, Any], ts: str) -> list[SessionItem]:
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

    def _held_before(self, kind: Any, payload: dict[str, Any]) -> list[SessionItem]:
        """Decide a held user item by what follows it (a `user_message` event decides it itself,
        in `_event`)."""
        if self._held is None:
            return []
        if kind == "response_item" and payload.get("type") == "message":
            parts = text_parts(payload)
            if payload.get("role") == "user" and parts and not is_injected(parts):
                text, ts = self._held  # two user items in a row: the first is not the prompt
                self._held = None
                return self._context(text, ts)
        return self.flush() if shows(kind, payload) else []

    def flush(self) -> list[SessionItem]:
        """Decide a held user item as model output after it would: context in a turn that has
        its prompt, else the prompt (a build that wrote no event). Also called at the end of a
        pushed rollout and of the listing's head, so a held item is never lost."""
        if self._held is None:
            return []
        text, ts = self._held
        self._held = None
        if self.current is not None and self.current.prompt is not None:
            return self._context(text, ts)
        return self._prompt(text, ts, ITEM)

    def _context(self, text: str, ts: str) -> list[SessionItem]:
        """A user item the model was given that is not the prompt: shown, never as a prompt."""
        return [SystemEvent(ts=ts, subtype="context", content=redact_text(text))]

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

    def _open(self, ts: str, prompt: str | None, channel: str | None = None) -> None:
        self.turns += 1
        totals = dict(self.tokens.totals)
        self.current = _Turn(self.turns, ts, totals, prompt, channel, last_ts=ts)

    def _close(self, status: TurnStatus, ts: str, reason: str | None = None) -> list[SessionItem]:
        turn, self.current = self.current, None
        if turn is None:
            return []
        unfinished: list[SessionItem] = [*self.calls.results.unfinished()]
        closed = self.tokens.turn_complete(
            turn.tokens_at_start,
            number=turn.number,
            started=turn.started,
            ts=ts,
            model=self.model,
            status=status,
            reason=reason,
        )
        return [*unfinished, closed]

    def _prompt(self, text: str, ts: str, channel: str, echoed: bool = False) -> list[SessionItem]:
        turn = self.current
        items: list[SessionItem] = []
        if turn is not None:
            finished = turn.ended_on_text and not turn.open_calls
            items += self._close("ok" if finished else "stopped", turn.last_ts or ts)
        self._open(ts, text.strip(), channel)
        assert self.current is not None
        self.current.echoed = echoed
        self._echoes.clear()
        if self.first_prompt is None:
            # Codex Desktop prefixes mentioned files; the title is what was asked.
            asked = text.partition(_DESKTOP_REQUEST)[2] or text
            self.first_prompt = redact_text(one_line(asked))[:TITLE_CHARS]
        items.append(UserEvent(ts=ts, content=redact_text(text)))
        return items

    def _shown(
        self, items: list[SessionItem], *, text_end: bool = False, text: bool = False
    ) -> list[SessionItem]:
        if items:
            if not text:
                self._echoes.clear()  # a copy of a text shown before this is a new text
            if self.current is None:
                self._open(items[0].ts, None)
            assert self.current is not None
            self.current.quiet_since_prompt = False
            self.current.ended_on_text = text_end
            self.current.last_ts = items[-1].ts or self.current.last_ts
        return items

    # --- response items ---

    def _response_item(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        kind = p.get("type")
        if kind == "message":
            parts = text_parts(p)
            role = p.get("role")
            if role == "user":
                return self._user_item(parts, ts)
            if role == "assistant" and parts:
                return self._assistant("\n".join(parts), ts, ITEM)
            return []
        if kind == "reasoning":
            parts = [_text(s.get("text")) for s in _list(p.get("summary")) if isinstance(s, dict)]
            if not any(parts):
                parts = [
                    _text(c.get("text")) for c in _list(p.get("content")) if isinstance(c, dict)
                ]
            parts = [t for t in parts if t.strip()]
            return self._thinking("\n\n".join(parts), ts, ITEM, len(parts)) if parts else []
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            return self._call(p, ts)
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self._output(p, ts)
        if kind in ("ghost_snapshot", "compaction"):
            return []
        content = f"Unrecognized response item {kind!r}"
        return self._shown([SystemEvent(ts=ts, subtype="unknown", content=content)])

    def _user_item(self, parts: list[str], ts: str) -> list[SessionItem]:
        if not parts or is_injected(parts):
            return []
        text = "\n".join(parts)
        if self._bare:
            return self._prompt(text, ts, ITEM)  # no events: the item is the prompt
        turn = self.current
        if (
            turn is not None
            and turn.quiet_since_prompt
            and turn.prompt_channel == EVENT
            and not turn.echoed
        ):
            turn.echoed = True
            return []  # the prompt's copy, right after its event
        self._held = (text, ts)  # what follows says whether it is the prompt (`_held_before`)
        return []

    def _assistant(self, text: str, ts: str, channel: str) -> list[SessionItem]:
        if self._echoes.is_echo("assistant", channel):
            return []
        self._echoes.shown("assistant", channel)
        item = AssistantEvent(ts=ts, content=redact_text(text))
        return self._shown([item], text_end=True, text=True)

    def _thinking(self, text: str, ts: str, channel: str, parts: int = 1) -> list[SessionItem]:
        if self._echoes.is_echo("thinking", channel):
            return []
        self._echoes.shown("thinking", channel, parts)
        ended = self.current.ended_on_text if self.current is not None else False
        item = ThinkingEvent(ts=ts, content=redact_text(text))
        return self._shown([item], text_end=ended, text=True)

    def _call(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        items, opened = self.calls.call(p, ts)
        items = self._shown(items)
        if opened and self.current is not None:
            self.current.open_calls.add(opened)
        return items

    def _output(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        call_id, items = self.calls.output(p, ts)
        if self.current is not None:
            self.current.open_calls.discard(call_id)
        return self._shown(items)

    def _command_end(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        call_id, items = self.calls.ended(p, ts)
        if self.current is None:
            return items  # the user's own command between turns: the model did not work
        self.current.open_calls.discard(call_id)
        return self._shown(items)

    # --- events ---

    def _event(self, p: dict[str, Any], ts: str) -> list[SessionItem]:
        kind = p.get("type")
        if kind == "user_message":
            text = _text(p.get("message"))
            if _text(p.get("kind")) not in ("", "plain") or not text.strip():
                return []
            echoed = self._held is not None  # the user item just before is this prompt's copy
            self._held = None
            return self._prompt(text, ts, EVENT, echoed)
        if kind == "agent_message":
            text = _text(p.get("message"))
            return self._assistant(text, ts, EVENT) if text.strip() else []
        if kind == "agent_reasoning":
            text = _text(p.get("text"))
            return self._thinking(text, ts, EVENT) if text.strip() else []
        if kind == "exec_command_end":
            return self._command_end(p, ts)
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
