"""What a session's card shows beyond its listing's totals, summed from its items in one pass
(`GET …/session/summary`): tokens and cost split between the main thread and sub-agents, the
models used, prompts, the first prompt, and the span of its items.

Turns, tokens by kind and cost are `core/totals.py`'s, the same rule and code as the sessions
listing, so the card and the list agree, and both equal the sum of the turns the timeline
shows. The sub-agents' part comes from each turn's `subagent_tokens` and `subagent_cost_usd`
(already inside the turn's own figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import SessionItem, TurnCompleteEvent, UserEvent
from sidemirror.core.totals import COST_DIGITS, SessionTotals

FIRST_PROMPT_CHARS = 2000  # the card shows the start of it; the timeline has it whole


@dataclass
class CardFigures:
    totals: SessionTotals = field(default_factory=SessionTotals)  # turns, tokens, cost
    items: int = 0
    prompts: int = 0  # the main thread's (a sub-agent's task prompt is its parent's call)
    subagent_tokens: int = 0  # the part of the tokens (all kinds) that was sub-agents'
    subagent_cost_usd: float = 0.0  # the part of the cost that was sub-agents'
    unpriced_turns: int = 0  # turns whose model has no price: the cost leaves them out
    models: list[str] = field(default_factory=list)  # in the order first used
    first_ts: str | None = None
    last_ts: str | None = None
    first_prompt: UserEvent | None = None

    def add(self, item: SessionItem) -> None:
        self.items += 1
        if item.ts:
            self.first_ts = self.first_ts or item.ts
            self.last_ts = item.ts
        self.totals.add(item)
        if isinstance(item, TurnCompleteEvent):
            self._turn(item)
        elif isinstance(item, UserEvent) and item.parent_tool_use_id is None:
            self.prompts += 1
            self.first_prompt = self.first_prompt or item

    def _turn(self, turn: TurnCompleteEvent) -> None:
        self.subagent_tokens += turn.subagent_tokens or 0
        if turn.cost_usd is None:
            self.unpriced_turns += 1
        else:
            self.subagent_cost_usd += turn.subagent_cost_usd or 0.0
        if turn.model and turn.model not in self.models:
            self.models.append(turn.model)

    def view(self, started_at: str | None) -> dict[str, Any]:
        """The JSON figures; `started_at`: the session's start where its source knows it (the
        first item held is later when a huge transcript was read from near its end)."""
        listed = self.totals.listed()
        cost = listed["cost_usd"]
        first = self.first_prompt
        return {
            **listed,
            "items": self.items,
            "prompts": self.prompts,
            "subagent_tokens": self.subagent_tokens,
            "main_cost_usd": None
            if cost is None
            else round(cost - self.subagent_cost_usd, COST_DIGITS),
            "subagent_cost_usd": round(self.subagent_cost_usd, COST_DIGITS),
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
