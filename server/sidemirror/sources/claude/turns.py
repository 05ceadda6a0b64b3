"""Turn accounting for Claude Code transcripts: when a turn closes, its tokens, cost and status.

Claude Code writes one line per content block, each repeating the message's `usage` as it stood
when the block was flushed (output tokens grow along the way). So usage is deduplicated by
`message.id` + `requestId`, keeping the largest record: summing lines would count a message
several times. Sub-agent messages count toward the turn that spawned them: they are what it cost,
and their part is also reported apart (`subagent_tokens`, `subagent_cost_usd`). A Task whose
sub-agent's messages were never read (its agent file is gone) counts the `usage` its result
reports instead, never both; that result does not name the model, so the turn's cost is then
unknown (null) rather than a guess.

A turn can run for hours (an agent left working, or a fleet of them): its usage is kept per
message only for the latest `RECENT_MESSAGES` messages, the ones a later line can still raise;
older ones are folded into running sums, in the order they were first seen, which is the order
the sums were always taken in, so every figure is the same as if each message were kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from sidemirror.core.clock import ms_between
from sidemirror.core.models import TurnCompleteEvent, TurnStatus
from sidemirror.core.pricing import context_window_for, estimate_cost_usd

# Claude Code writes a message's lines back to back; only sub-agents running at once interleave
# theirs. A message first seen this many messages ago is settled: no later line repeats it.
RECENT_MESSAGES = 64


@dataclass(frozen=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write_5m + other.cache_write_5m,
            self.cache_write_1h + other.cache_write_1h,
        )

    @property
    def total(self) -> int:
        return (
            self.input + self.output + self.cache_read + self.cache_write_5m + self.cache_write_1h
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_from(raw: Any) -> Usage | None:
    """A message's `usage`; the 5m/1h cache-write split from `cache_creation` when present."""
    if not isinstance(raw, dict):
        return None
    cache_write = _int(raw.get("cache_creation_input_tokens"))
    split = raw.get("cache_creation")
    if isinstance(split, dict):
        write_5m = _int(split.get("ephemeral_5m_input_tokens"))
        write_1h = _int(split.get("ephemeral_1h_input_tokens"))
        if write_5m + write_1h != cache_write:
            # Drift between the total and the split: trust the total, bill the rest at 5m.
            write_5m = max(0, cache_write - write_1h)
    else:
        write_5m, write_1h = cache_write, 0
    return Usage(
        input=_int(raw.get("input_tokens")),
        output=_int(raw.get("output_tokens")),
        cache_read=_int(raw.get("cache_read_input_tokens")),
        cache_write_5m=write_5m,
        cache_write_1h=write_1h,
    )


# A message's model, its usage, and whether a sub-agent sent it.
Counted: TypeAlias = tuple[str | None, Usage, bool]


@dataclass
class Sums:
    """Tokens summed, and their cost (None once a message's model has no price)."""

    tokens: Usage = field(default_factory=Usage)
    cost: float | None = 0.0

    def add(self, model: str | None, usage: Usage) -> None:
        self.tokens += usage
        price = (
            None
            if model is None
            else estimate_cost_usd(
                model,
                input_tokens=usage.input,
                output_tokens=usage.output,
                cache_read_tokens=usage.cache_read,
                cache_write_5m_tokens=usage.cache_write_5m,
                cache_write_1h_tokens=usage.cache_write_1h,
            )
        )
        self.cost = None if price is None or self.cost is None else self.cost + price


@dataclass
class TurnUsage:
    """A turn's usage, deduplicated by message: the recent messages each (a later line of one
    may raise it), the settled ones summed (all of them, and the sub-agents' apart)."""

    # (message id, request id) -> what it counts, in the order first seen
    recent: dict[tuple[str, str | None], Counted] = field(default_factory=dict)
    settled: Sums = field(default_factory=Sums)
    settled_sub: Sums = field(default_factory=Sums)

    def put(self, key: tuple[str, str | None], counted: Counted) -> None:
        """The largest record of a message is what counts."""
        seen = self.recent.get(key)
        if seen is not None and counted[1].total <= seen[1].total:
            return
        self.recent[key] = counted
        if seen is None and len(self.recent) > RECENT_MESSAGES:
            oldest = next(iter(self.recent))
            model, usage, sub = self.recent.pop(oldest)
            self.settled.add(model, usage)
            if sub:
                self.settled_sub.add(model, usage)

    def sums(self) -> tuple[Sums, Sums]:
        """All of the turn's usage summed, and its sub-agents' part."""
        total = Sums(self.settled.tokens, self.settled.cost)
        sub = Sums(self.settled_sub.tokens, self.settled_sub.cost)
        for model, usage, is_sub in self.recent.values():
            total.add(model, usage)
            if is_sub:
                sub.add(model, usage)
        return total, sub


@dataclass
class Turn:
    number: int | None
    started: str | None
    usage: TurnUsage = field(default_factory=TurnUsage)
    sub_tasks: set[str] = field(default_factory=set)  # Tasks whose sub-agent messages counted
    model: str | None = None
    last_ts: str | None = None
    # What the main thread did last: an interrupted turn ends on a tool call or mid-stream.
    outstanding_tools: set[str] = field(default_factory=set)
    ended_on_text: bool = False
    failed: bool = False
    interrupted: bool = False
    # The latest main-thread request's usage: what the model saw (`context_tokens`).
    last_request: Usage | None = None


@dataclass
class Closed:
    """The turn closed last: its `turn_complete` (numbered by the session once fed) and when
    it started, for a figure of the agent's own that may follow (parser.py, `turn_duration`)."""

    item: TurnCompleteEvent
    started: str | None


class TurnTracker:
    """At most one open turn; `close` returns its `turn_complete` (None if none is open)."""

    def __init__(self, *, counted: bool = True) -> None:
        # Turns are numbered only when the parse starts at the session's start.
        self.count: int | None = 0 if counted else None
        self.current: Turn | None = None
        self.last_closed: Closed | None = None

    def open(self, ts: str | None) -> None:
        if self.count is not None:
            self.count += 1
        self.current = Turn(self.count, ts, last_ts=ts)

    def add_usage(
        self,
        message_id: str,
        request_id: str | None,
        model: str | None,
        usage: Usage,
        task: str | None = None,
    ) -> None:
        """`task`: the Task call whose sub-agent sent the message (None: the main thread)."""
        turn = self.current
        if turn is None:
            return
        if task is not None:
            turn.sub_tasks.add(task)
        turn.usage.put((message_id, request_id), (model, usage, task is not None))

    def task_usage(self, task: str, model: str | None, usage: Usage) -> None:
        """What a Task's result says its sub-agent used: counted unless its messages were."""
        turn = self.current
        if turn is not None and task not in turn.sub_tasks:
            turn.sub_tasks.add(task)
            turn.usage.put((f"task:{task}", None), (model, usage, True))

    def close_by_prompt(self) -> TurnCompleteEvent | None:
        """A new prompt arrived: the open turn ends, `stopped` unless it had visibly finished."""
        turn = self.current
        if turn is None:
            return None
        finished = turn.ended_on_text and not turn.outstanding_tools and not turn.interrupted
        status: TurnStatus = "failed" if turn.failed else ("ok" if finished else "stopped")
        return self.close(status, ms_between(turn.started, turn.last_ts))

    def close(self, status: TurnStatus, duration_ms: int | None) -> TurnCompleteEvent | None:
        turn, self.current = self.current, None
        if turn is None:
            return None
        summed, sub = turn.usage.sums()
        totals, cost = summed.tokens, summed.cost
        item = TurnCompleteEvent(
            ts=turn.last_ts or turn.started or "",
            turn=turn.number,
            input_tokens=totals.input,
            output_tokens=totals.output,
            cache_read_tokens=totals.cache_read,
            cache_write_tokens=totals.cache_write_5m + totals.cache_write_1h,
            cost_usd=cost,
            cost_source="estimated" if cost is not None else "unknown_model",
            model=turn.model,
            duration_ms=duration_ms,
            status=status,
            context_tokens=context_tokens(turn.last_request),
            context_window=context_window_for(turn.model),
            subagent_tokens=sub.tokens.total if turn.sub_tasks else None,
            subagent_cost_usd=sub.cost if turn.sub_tasks else None,
        )
        self.last_closed = Closed(item, turn.started)
        return item


def context_tokens(usage: Usage | None) -> int | None:
    """Tokens the model saw in one request: its input, cache reads and cache writes."""
    if usage is None:
        return None
    return usage.input + usage.cache_read + usage.cache_write_5m + usage.cache_write_1h
