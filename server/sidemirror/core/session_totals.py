"""A session's totals, summed from its items: what its card shows (`GET .../session/summary`).

Turns, tokens and cost are the main thread's `turn_complete` items: a sub-agent's turns are
already inside its parent's turn (`subagent_tokens`, `subagent_cost_usd`), so counting them
again would count them twice. The same rule as the export's header (export/walker.py), so the
card and an exported file say the same figures, and both equal the sum of the turns the
timeline shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import SessionItem, TurnCompleteEvent, UserEvent

FIRST_PROMPT_CHARS = 2000  # the card shows the start of it; the timeline has it whole


@dataclass
class SessionTotals:
    items: int = 0
    prompts: int = 0
    turns: int = 0
    tokens: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    )
    subagent_tokens: int = 0  # the part of `tokens` (all kinds) that was sub-agents'
    cost_usd: float | None = None  # null until a turn has a price
    subagent_cost_usd: float = 0.0  # the part of `cost_usd` that was sub-agents'
    unpriced_turns: int = 0  # turns whose model has no price: `cost_usd` leaves them out
    models: list[str] = field(default_factory=list)  # in the order first used
    first_ts: str | None = None
    last_ts: str | None = None
    first_prompt: UserEvent | None = None

    def add(self, item: SessionItem) -> None:
        self.items += 1
        if item.ts:
            self.first_ts = self.first_ts or item.ts
            self.last_ts = item.ts
        if item.parent_tool_use_id is not None:
            return  # a sub-agent's: inside its parent's turn
        if isinstance(item, UserEvent):
            self.prompts += 1
            self.first_prompt = self.first_prompt or item
        elif isinstance(item, TurnCompleteEvent):
            self._turn(item)

    def _turn(self, turn: TurnCompleteEvent) -> None:
        self.turns += 1
        self.tokens["input"] += turn.input_tokens
        self.tokens["output"] += turn.output_tokens
        self.tokens["cache_read"] += turn.cache_read_tokens
        self.tokens["cache_write"] += turn.cache_write_tokens
        self.subagent_tokens += turn.subagent_tokens or 0
        if turn.cost_usd is None:
            self.unpriced_turns += 1
        else:
            self.cost_usd = (self.cost_usd or 0.0) + turn.cost_usd
            self.subagent_cost_usd += turn.subagent_cost_usd or 0.0
        if turn.model and turn.model not in self.models:
            self.models.append(turn.model)

    def view(self, started_at: str | None) -> dict[str, Any]:
        """The JSON figures; `started_at`: the session's start where its source knows it (the
        first item held is later when a huge transcript was read from near its end)."""
        cost = self.cost_usd
        first = self.first_prompt
        return {
            "items": self.items,
            "prompts": self.prompts,
            "turns": self.turns,
            "tokens": dict(self.tokens),
            "subagent_tokens": self.subagent_tokens,
            "cost_usd": None if cost is None else round(cost, 6),
            "main_cost_usd": None if cost is None else round(cost - self.subagent_cost_usd, 6),
            "subagent_cost_usd": round(self.subagent_cost_usd, 6),
            "unpriced_turns": self.unpriced_turns,
            "models": self.models,
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "duration_ms": ms_between(started_at or self.first_ts, self.last_ts),
            "first_prompt": None
            if first is None
            else {
                "id": first.id,
                "text": first.content[:FIRST_PROMPT_CHARS],
                "truncated": first.truncated or len(first.content) > FIRST_PROMPT_CHARS,
            },
        }


def session_totals(items: Iterable[SessionItem]) -> SessionTotals:
    totals = SessionTotals()
    for item in items:
        totals.add(item)
    return totals
