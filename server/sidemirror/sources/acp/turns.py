"""A session's turns as ACP reports them: numbering, tokens, reported cost and context figures.

Cost: `usage_update.cost` is the session's running total, so a turn's reported cost is its growth
during the turn. Context: `usage_update.used`/`size` are the tokens in context and the window,
so the last ones a turn saw are its `context_tokens`/`context_window`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import CostSource, TurnCompleteEvent, TurnStatus
from sidemirror.core.pricing import estimate_cost_usd
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass
class _Turn:
    number: int
    started: str
    cost_at_start: float | None
    cost_reported: bool = False


class AcpTurns:
    def __init__(self) -> None:
        self.count = 0
        self.current: _Turn | None = None
        self.cost_total: float | None = None
        self.context: tuple[int, int] | None = None  # (used, size) of the latest usage_update

    def open(self, ts: str) -> None:
        self.count += 1
        self.current = _Turn(self.count, ts, self.cost_total)

    def ensure_open(self, ts: str) -> None:
        if self.current is None:
            self.open(ts)  # attached mid-session: the prompt was not seen

    def note_usage(self, update: dict[str, Any]) -> None:
        """A `usage_update` (or a v2 `state_update`, which carries none of these)."""
        used, size = update.get("used"), update.get("size")
        if isinstance(used, int) and isinstance(size, int) and not isinstance(used, bool):
            self.context = (max(0, used), max(0, size))
        cost = _dict(update.get("cost"))
        amount = cost.get("amount")
        currency = _text(cost.get("currency")) or "USD"
        if isinstance(amount, int | float) and not isinstance(amount, bool) and currency == "USD":
            self.cost_total = float(amount)
            if self.current is not None:
                self.current.cost_reported = True

    def close(
        self,
        status: TurnStatus,
        usage: dict[str, Any],
        ts: str,
        model: str | None,
        stop_reason: str | None = None,
    ) -> TurnCompleteEvent | None:
        turn, self.current = self.current, None
        if turn is None:
            return None
        tokens_in = _count(usage.get("inputTokens"))
        tokens_out = _count(usage.get("outputTokens"))
        cache_read = _count(usage.get("cachedReadTokens"))
        cache_write = _count(usage.get("cachedWriteTokens"))
        cost: float | None = None
        source: CostSource = "unknown_model"
        if turn.cost_reported and self.cost_total is not None:
            cost = max(0.0, self.cost_total - (turn.cost_at_start or 0.0))
            source = "reported"
        elif usage:
            cost = estimate_cost_usd(
                model,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                cache_read_tokens=cache_read,
                cache_write_5m_tokens=cache_write,
                cache_write_1h_tokens=0,
            )
            source = "estimated" if cost is not None else "unknown_model"
        used, size = self.context if self.context is not None else (None, None)
        return TurnCompleteEvent(
            ts=ts,
            turn=turn.number,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            cost_usd=cost,
            cost_source=source,
            model=model,
            duration_ms=ms_between(turn.started, ts),
            status=status,
            stop_reason=stop_reason,
            context_tokens=used,
            context_window=size or None,
        )
