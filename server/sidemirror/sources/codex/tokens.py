"""A Codex rollout's token counts: what each turn used and cost, and the context it ended with.

`token_count` events repeat cumulative totals (`info.total_token_usage`), several times per turn:
a turn's tokens are the growth of the totals during it, so repeats never double count. OpenAI
counts cached input inside `input_tokens`. `info.last_token_usage.input_tokens` is what the
model saw at the latest request and `model_context_window` (also on `task_started`) its window:
the turn's context figures.
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import TurnCompleteEvent, TurnStatus
from sidemirror.core.pricing import context_window_for, estimate_cost_usd
from sidemirror.sources.common import as_dict as _dict

FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens")


def _counts(raw: Any) -> dict[str, int]:
    d = _dict(raw)
    return {k: v if isinstance(v, int) and v > 0 else 0 for k in FIELDS for v in [d.get(k)]}


class TokenCounts:
    def __init__(self) -> None:
        self.totals: dict[str, int] = dict.fromkeys(FIELDS, 0)
        self.context_tokens: int | None = None
        self.context_window: int | None = None

    def event(self, kind: str, payload: dict[str, Any]) -> None:
        """A `token_count` or `task_started` event (the window is known before the first count)."""
        info = _dict(payload.get("info")) if kind == "token_count" else payload
        totals = info.get("total_token_usage")
        if totals is not None:
            self.totals = _counts(totals)
        last = info.get("last_token_usage")
        if isinstance(last, dict):  # cached input included: what the model saw
            self.context_tokens = _counts(last)["input_tokens"]
        window = info.get("model_context_window")
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            self.context_window = window

    def turn_complete(
        self,
        at_start: dict[str, int],
        *,
        number: int,
        started: str,
        ts: str,
        model: str | None,
        status: TurnStatus,
        reason: str | None,
    ) -> TurnCompleteEvent:
        grown = {k: max(0, self.totals[k] - at_start[k]) for k in FIELDS}
        cached = grown["cached_input_tokens"]
        fresh = max(0, grown["input_tokens"] - cached)
        cost = estimate_cost_usd(
            model,
            input_tokens=fresh,
            output_tokens=grown["output_tokens"],
            cache_read_tokens=cached,
            cache_write_5m_tokens=0,
            cache_write_1h_tokens=0,
        )
        return TurnCompleteEvent(
            ts=ts,
            turn=number,
            input_tokens=fresh,
            output_tokens=grown["output_tokens"],
            cache_read_tokens=cached,
            cost_usd=cost,
            cost_source="estimated" if cost is not None else "unknown_model",
            model=model,
            duration_ms=ms_between(started, ts) if started and ts else None,
            status=status,
            stop_reason=reason,
            context_tokens=self.context_tokens,
            context_window=self.context_window or context_window_for(model),
        )
