"""Claude Code transcript records → canonical session items (pure: no I/O, no clock).

Feed the decoded JSON records of a session's files in merge order; the same records in the same
order always give the same items, which is what makes item ids (positions) stable.

Format notes, from real transcripts of Claude Code 1.0 to 2.1:
- One line per content block; the blocks of one API message share `message.id`, and each line
  repeats the message's `usage` as it stood then (deduplicated in `claude_turns`).
- `user` lines are either real prompts (a string or text blocks), tool results (`tool_result`
  blocks), injected context (`isMeta`), compaction summaries (`isCompactSummary`), interruption
  markers, or local command echoes. Only real prompts open turns.
- Sub-agent lines carry `isSidechain`. They are written inline (older versions: chained by
  `parentUuid` from a root prompt equal to the Task's `prompt`) or in separate agent files
  (`agentId`; the Task's tool_result names that `agentId` when the sub-agent finishes). Both are
  linked to the spawning Task call through `parent_tool_use_id`. Agent files no Task spawned
  (Claude Code's own warm-up agents) never link and yield nothing. An inline thread no Task
  claims nests under an "Unplaced sub-agent" card of its own (claude/subagents.py).
- Bookkeeping records (`file-history-snapshot`: editor undo state; `progress`: transient hook and
  tool progress) say nothing a reader of the session needs and are skipped. `queue-operation`
  records are the one trace of a message typed while the agent worked (claude/queued.py).
- A compaction is a `compact_boundary` system line then a `user` line holding the summary
  (`isCompactSummary`): one `compact` item with the summary inside, emitted with the summary.
- `summary` records title the session only when their leaf is in this file (claude/titles.py).
- Hooks that said something (`attachment` hook records, a `stop_hook_summary` with errors or a
  stop) become small `system`/`hook` lines (claude/hooks.py). Other unknown record
  types become `system`/`unknown`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import (
    AssistantEvent,
    SessionItem,
    SystemEvent,
    ToolResultEvent,
    TurnDurationEvent,
    TurnStatus,
    UserEvent,
)
from sidemirror.core.recent import CALLS_REMEMBERED, RecentDict
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.branches import BranchTracker
from sidemirror.sources.claude.hooks import attachment_line, stop_summary_line
from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.claude.queued import QueuedMessages
from sidemirror.sources.claude.subagents import (
    UNPLACED,
    UNPLACED_NAME,
    SubagentLinker,
    unplaced_card,
)
from sidemirror.sources.claude.task_plan import TASK_PLAN_TOOLS, TaskPlans
from sidemirror.sources.claude.titles import Titles, shown_prompt, title_of
from sidemirror.sources.claude.tools import (
    slash_command,
    strip_tags,
    thinking_item,
    tool_call_item,
    tool_result_item,
    user_kind,
)
from sidemirror.sources.claude.turns import TurnTracker, usage_from
from sidemirror.sources.common import as_dict, attachments, flatten_content
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.tool_names import TASK_TOOLS

SKIPPED_TYPES = frozenset({"file-history-snapshot", "progress", "last-prompt"})
DURATION_SLACK_MS = 1000  # timestamps and `durationMs` are taken at slightly different moments


class ClaudeParser:
    """The state one session's parse needs: open turn, tool calls, sub-agent links, metadata."""

    def __init__(
        self,
        *,
        from_start: bool = True,
        earlier_call: Callable[[str], tuple[str, str] | None] | None = None,
    ) -> None:
        # False when the parse starts at a sync point (sync.py): turns are not counted.
        self.turns = TurnTracker(counted=from_start)
        # There, a result of a call made before the start: its (name, ts) (straddle.py).
        self._earlier_call = earlier_call
        self.first_prompt: str | None = None
        self.cwd: str | None = None
        self.git_branch: str | None = None
        self.started_at: str | None = None
        self.last_ts: str | None = None
        self.errors = 0  # records that were valid JSON but not objects
        # tool_use_id -> (name, ts), of the latest calls: a result comes soon after its call (an
        # older one still shows, without its name), and a session followed for hours would
        # otherwise keep a row for every call it ever made.
        self._tools: RecentDict[str, tuple[str, str]] = RecentDict(CALLS_REMEMBERED)
        self._subagents = SubagentLinker()
        self._task_plans = TaskPlans()
        self._branches = BranchTracker()
        self._titles = Titles(self._branches.has)
        self._queued = QueuedMessages()
        # A `compact_boundary` waits for the summary line that follows it: one row for both.
        self._compaction: SystemEvent | None = None

    @property
    def title(self) -> str | None:
        return self._titles.title

    # --- entry point ---

    def feed(self, record: Any, origin: str = MAIN, end: int | None = None) -> list[SessionItem]:
        """`end`: the byte offset just past the record's line in its file, when known (it names
        a rewind's branch point by position)."""
        if not isinstance(record, dict):
            self.errors += 1
            return []
        self._note_meta(record)
        if origin != MAIN or record.get("isSidechain") is True:
            return self._sidechain(record, origin)
        self._titles.record(record)
        held = self._compaction
        items = self._record(record, None)
        if held is not None and self._compaction is held:
            self._compaction = None
            items.insert(0, held)  # no summary followed: the boundary alone
        self._branches.note(record, end)
        return items

    def _note_meta(self, record: dict[str, Any]) -> None:
        cwd = record.get("cwd")
        if self.cwd is None and isinstance(cwd, str) and cwd:
            self.cwd = cwd
        branch = record.get("gitBranch")
        if isinstance(branch, str) and branch:
            self.git_branch = branch
        ts = record.get("timestamp")
        if isinstance(ts, str) and ts:
            self.started_at = self.started_at or ts
            self.last_ts = ts

    def _sidechain(self, record: dict[str, Any], origin: str) -> list[SessionItem]:
        parent = self._subagents.route(record, origin)
        if parent is None:
            return []
        return self._group(parent, _text(record.get("timestamp"))) + self._record(record, parent)

    def _group(self, parent: str, ts: str) -> list[SessionItem]:
        """The card an unplaced sub-agent thread's items nest under, before its first item."""
        if not parent.startswith(UNPLACED) or parent in self._tools:
            return []
        self._tools[parent] = (UNPLACED_NAME, ts)
        return unplaced_card(parent, ts)

    def _unplaced(self) -> list[SessionItem]:
        items: list[SessionItem] = []
        for group, held in self._subagents.unplaced():
            for record in held:
                items += self._group(group, _text(record.get("timestamp")))
                items += self._record(record, group)
        return items

    # --- records ---

    def _record(self, record: dict[str, Any], parent: str | None) -> list[SessionItem]:
        kind = record.get("type")
        if not isinstance(kind, str):  # drifted or hostile input: shown, never fatal
            content = f"Unrecognized record type {kind!r}"
            return [self._system_item(record, parent, "unknown", content)]
        if kind == "user":
            return self._user(record, parent)
        if kind == "assistant":
            return self._assistant(record, parent)
        if kind == "system":
            return self._system(record, parent)
        if kind in ("summary", "custom-title"):
            return []  # titles (claude/titles.py)
        if kind == "queue-operation":
            return [] if parent is not None else list(self._queued.operation(record))
        if kind == "attachment":
            line = attachment_line(record)
            return [] if line is None else [self._system_item(record, parent, "hook", line)]
        if kind in SKIPPED_TYPES:
            return []
        detail = _text(record.get("content")) or _text(record.get("message"))
        content = f"{kind}: {detail}" if detail else f"Unrecognized record type {kind!r}"
        return [self._system_item(record, parent, "unknown", content)]

    def _system_item(
        self, record: dict[str, Any], parent: str | None, subtype: str, content: str
    ) -> SystemEvent:
        return SystemEvent(
            ts=_text(record.get("timestamp")),
            parent_tool_use_id=parent,
            subtype=subtype,
            content=redact_text(content),
        )

    def _user(self, record: dict[str, Any], parent: str | None) -> list[SessionItem]:
        ts = _text(record.get("timestamp"))
        kind, text = user_kind(record)
        if kind == "tool_results":
            content = record["message"]["content"]
            return self._tool_results(record, content, parent)
        if kind == "meta":
            return []
        if kind == "compact":
            item = self._system_item(record, parent, "compact", text)
            held, self._compaction = self._compaction, None
            if held is not None:  # the boundary just before: one row, the summary inside
                item = held.model_copy(update={"content": f"{held.content}\n\n{item.content}"})
            return [item]
        # Images are shown as chips (type, size) beside the text, never inside it.
        media = attachments(as_dict(record.get("message")).get("content"))
        if parent is not None:
            tool = self._tools.get(parent, ("", ""))[0] or "Task"
            return [
                UserEvent(
                    ts=ts,
                    parent_tool_use_id=parent,
                    content=redact_text(text),
                    attachments=media,
                    task_prompt_tool=tool,  # the sub-agent's prompt, not the user's
                )
            ]
        if kind == "interrupted":
            items: list[SessionItem] = [self._system_item(record, None, "interrupted", text)]
            if self.turns.current is not None:
                self.turns.current.interrupted = True
                self.turns.current.last_ts = ts or self.turns.current.last_ts
            closed = self.turns.close_by_prompt()
            return items + ([closed] if closed else [])
        if kind == "local_command":  # `/model` and its output: small lines, never a turn
            shown = slash_command(text) if "<command-name>" in text else strip_tags(text)
            return [self._system_item(record, None, "local_command", shown)] if shown else []
        text = shown_prompt(text)
        items = self._unplaced()
        closed = self.turns.close_by_prompt()
        if closed is not None:
            items.append(closed)
        rewind = self._branches.rewind(record, ts)
        if rewind is not None:
            items.append(rewind)
        self.turns.open(ts or None)
        if self.first_prompt is None:
            self.first_prompt = title_of(text)
        sent = self._queued.prompt(text)
        if sent != "repeat":
            queued = True if sent == "queued" else None
            items.append(
                UserEvent(ts=ts, content=redact_text(text), attachments=media, queued=queued)
            )
        return items

    def _tool_results(
        self, record: dict[str, Any], content: list[Any], parent: str | None
    ) -> list[SessionItem]:
        ts = _text(record.get("timestamp"))
        items: list[SessionItem] = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = _text(block.get("tool_use_id"))
            call = self._tools.get(tool_id)
            if call is None and parent is None and self._earlier_call is not None:
                call = self._earlier_call(tool_id)
                if call is not None:
                    self._tools[tool_id] = call
            name, started = call or ("", "")
            is_error = block.get("is_error") is True
            output = redact_text(flatten_content(block.get("content")))
            turn = self.turns.current
            if parent is None and turn is not None:
                turn.outstanding_tools.discard(tool_id)
                turn.last_ts = ts or turn.last_ts
            self._subagents.task_finished(tool_id)
            result = record.get("toolUseResult")
            if name in TASK_TOOLS and isinstance(result, dict) and result.get("agentId"):
                for held in self._subagents.release(str(result["agentId"]), tool_id):
                    items += self._record(held, tool_id)
            if name in TASK_TOOLS and isinstance(result, dict) and parent is None:
                reported = usage_from(result.get("usage"))
                if reported is not None:
                    # The result does not name the sub-agent's model (often not the parent's:
                    # Explore runs Haiku), so its cost is unknown, never a guess.
                    self.turns.task_usage(tool_id, None, reported)
            if name in TASK_PLAN_TOOLS:
                plan = self._task_plans.of(parent)
                structured = record.get("toolUseResult")
                items += plan.result(tool_id, name, structured, output, is_error, ts, parent)
                continue
            duration = ms_between(started, ts) if started and ts else None
            result_item = tool_result_item(tool_id, name, output, is_error, ts, parent, duration)
            if isinstance(result_item, ToolResultEvent):
                result_item.attachments = attachments(block.get("content"))
            if result_item is not None:
                items.append(result_item)
        return items

    def _assistant(self, record: dict[str, Any], parent: str | None) -> list[SessionItem]:
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        ts = _text(record.get("timestamp"))
        model = _text(message.get("model")) or None
        turn = self.turns.current
        usage = usage_from(message.get("usage"))
        message_id = _text(message.get("id"))
        if usage is not None and message_id and model != "<synthetic>":
            request = _text(record.get("requestId")) or None
            self.turns.add_usage(message_id, request, model, usage, parent)
        if parent is None and turn is not None:
            turn.last_ts = ts or turn.last_ts
            if model and model != "<synthetic>":
                turn.model = model
                turn.last_request = usage or turn.last_request
        content = message.get("content")
        if record.get("isApiErrorMessage") is True:
            if parent is None and turn is not None:
                turn.failed = True
            return [self._system_item(record, parent, "api_error", flatten_content(content))]
        items: list[SessionItem] = []
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if isinstance(block, dict):
                items += self._block(block, ts, parent)
        if parent is None and turn is not None and message.get("stop_reason") == "end_turn":
            closed = self.turns.close(
                "failed" if turn.failed else "ok", ms_between(turn.started, ts)
            )
            items += [closed] if closed else []
        return items

    def _block(self, block: dict[str, Any], ts: str, parent: str | None) -> list[SessionItem]:
        turn = self.turns.current if parent is None else None
        kind = block.get("type")
        if kind == "text":
            text = _text(block.get("text"))
            if not text.strip() or text.strip() == "(no content)":
                return []
            if turn is not None:
                turn.ended_on_text = True
            return [AssistantEvent(ts=ts, parent_tool_use_id=parent, content=redact_text(text))]
        if kind == "thinking":
            return thinking_item(block, ts, parent)
        if kind != "tool_use":
            return []
        tool_id, name = _text(block.get("id")), _text(block.get("name"))
        if not tool_id or tool_id in self._tools:
            return []  # a block repeated by a re-flushed line is the same call
        self._tools[tool_id] = (name, ts)
        tool_input = block.get("input")
        if turn is not None:
            turn.outstanding_tools.add(tool_id)
            turn.ended_on_text = False
        if name in TASK_TOOLS:
            prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
            self._subagents.task_started(tool_id, prompt if isinstance(prompt, str) else None)
        if name in TASK_PLAN_TOOLS:
            return self._task_plans.of(parent).call(tool_id, name, tool_input, ts, parent)
        return [tool_call_item(tool_id, name, tool_input, ts, parent)]

    def _system(self, record: dict[str, Any], parent: str | None) -> list[SessionItem]:
        subtype = _text(record.get("subtype")) or "unknown"
        if subtype == "turn_duration":
            return [] if parent is not None else self._turn_duration(record)
        if subtype == "stop_hook_summary":
            line = stop_summary_line(record)
            return [] if line is None else [self._system_item(record, parent, "hook", line)]
        content = _text(record.get("content"))
        if subtype == "local_command":  # newer versions: the command and its output, tagged
            content = slash_command(content) if "<command-name>" in content else strip_tags(content)
        if subtype == "compact_boundary":
            meta = record.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            trigger, before = meta.get("trigger"), meta.get("preTokens")
            content = content or "Conversation compacted"
            if trigger or before:
                content += f" ({trigger or 'auto'}, {before or '?'} tokens before)"
            if parent is None:  # held for the summary line (`feed`)
                earlier, self._compaction = (
                    self._compaction,
                    self._system_item(record, None, "compact", content),
                )
                return [] if earlier is None else [earlier]
            subtype = "compact"
        elif not content and record.get("error") is not None:
            content = flatten_content(record.get("error"))
        return [self._system_item(record, parent, subtype, content)]

    def _turn_duration(self, record: dict[str, Any]) -> list[SessionItem]:
        """Claude Code's own measure of a turn, written seconds after it ends. It closes the
        open turn it fits (versions that write no `end_turn`); a turn already closed (at its
        `end_turn`, or by a prompt sent as soon as it ended) was not held open waiting for a
        figure that may never come, so the figure follows as a `turn_duration` naming it."""
        raw = record.get("durationMs")
        duration = raw if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else None
        turn = self.turns.current
        if turn is not None and (duration is None or _measures(turn.started, record, duration)):
            status: TurnStatus = (
                "failed" if turn.failed else ("stopped" if turn.interrupted else "ok")
            )
            closed = self.turns.close(status, duration)
            return [closed] if closed else []
        done = self.turns.last_closed
        if duration is None or done is None or done.item.seq <= 0:
            return []  # nothing to name: its turn was not numbered (a parse without seqs)
        if not _measures(done.started, record, duration):
            return []  # longer than the turn it follows: not that turn's
        self.turns.last_closed = None  # one figure per turn
        ts = _text(record.get("timestamp"))
        return [TurnDurationEvent(ts=ts, turn_seq=done.item.seq, duration_ms=duration)]


def _measures(started: str | None, record: dict[str, Any], duration_ms: int) -> bool:
    """Whether a `turn_duration` record can measure the turn open since `started`. Its figure
    leaves out time spent waiting (so it is at most the wall time of its turn), and Claude Code
    writes it seconds after the turn ends, when the next prompt (a message queued meanwhile)
    may already be in: a figure longer than the open turn's wall time is the turn before's."""
    wall = ms_between(started, _text(record.get("timestamp")))
    return wall is None or duration_ms <= wall + DURATION_SLACK_MS
