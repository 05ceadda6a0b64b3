"""Session totals (core/totals.py): each turn counted once, whatever order a read brings them."""

from __future__ import annotations

from sidemirror.core.models import TurnCompleteEvent, UserEvent
from sidemirror.core.totals import SessionTotals, restored


def turn(seq: int, cost: float | None = 0.1, tokens: int = 10) -> TurnCompleteEvent:
    return TurnCompleteEvent(
        seq=seq,
        turn=None,
        input_tokens=tokens,
        output_tokens=2 * tokens,
        cache_read_tokens=3 * tokens,
        cache_write_tokens=4 * tokens,
        cost_usd=cost,
    )


def test_a_turn_at_or_below_what_was_counted_is_not_counted_again() -> None:
    totals = SessionTotals()
    for item in (turn(5), UserEvent(seq=6, content="hi"), turn(7), turn(5), turn(7)):
        totals.add(item)
    assert totals.listed() == {
        "turns": 2,
        "cost_usd": 0.2,  # rounded: 0.1 + 0.1 is not a float sum's 0.2000…1
        "tokens": {"input": 20, "output": 40, "cache_read": 60, "cache_write": 80},
    }


def test_a_whole_read_counts_a_skipped_part_that_comes_after_the_tail() -> None:
    totals = SessionTotals()
    totals.add_read([turn(100), turn(120)])  # the tail, held
    totals.add_read([turn(10), turn(50)])  # the skipped part, read back afterwards
    assert totals.turns == 4 and totals.through == 120
    totals.add(turn(110))  # published again by a later load: already counted
    totals.add(turn(130))
    assert totals.turns == 5


def test_cost_is_null_until_a_turn_has_a_price() -> None:
    totals = SessionTotals()
    totals.add(turn(1, cost=None))
    assert totals.listed()["cost_usd"] is None
    totals.add(turn(2, cost=0.5))
    assert totals.listed()["cost_usd"] == 0.5


def test_totals_kept_with_the_index_read_back_the_same() -> None:
    totals = SessionTotals()
    totals.add_read([turn(3), turn(9, cost=None)])
    assert restored(totals.saved()) == totals
    for bad in (None, "", "not json", "[1, 2]", '["a", 0, 0, 0, 0, null, 0]', "[true,0,0,0,0,0,0]"):
        assert restored(bad) is None
