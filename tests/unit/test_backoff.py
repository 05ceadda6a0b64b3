"""The forwarder's waits between tries: doubling, capped, each drawn from its upper half."""

from __future__ import annotations

from sidemirror.clients.retry import Backoff


def test_waits_double_up_to_the_cap_and_start_over_after_a_reset() -> None:
    top = Backoff(0.1, 5.0, rand=lambda: 1.0)
    assert [round(top.wait(), 3) for _ in range(9)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
    top.reset()
    assert top.wait() == 0.1


def test_each_wait_is_jittered_within_its_upper_half() -> None:
    low = Backoff(0.1, 5.0, rand=lambda: 0.0)
    assert [round(low.wait(), 3) for _ in range(8)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.5, 2.5]
