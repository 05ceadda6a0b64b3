"""The search build's CPU budget: no rest inside a window, then a rest long enough that the
process's CPU over the window and the rest is within the budget."""

from __future__ import annotations

import time

from sidemirror.index.cpu_budget import CpuBudget


def burn(cpu_s: float) -> None:
    start = time.process_time()
    while time.process_time() - start < cpu_s:
        sum(range(1000))


def test_a_busy_window_is_followed_by_a_rest_that_brings_it_within_budget() -> None:
    # A budget far below what a busy loop uses even on a loaded machine (where this process may
    # get a fifth of a core), so the window is always over it and the test holds under load.
    budget = CpuBudget(cores=0.05, window_s=0.2)
    assert budget.rest() == 0.0  # the window has barely begun
    t0, c0 = time.monotonic(), time.process_time()
    burn(0.3)
    rest = budget.rest()
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    assert rest > 0
    assert cpu / (wall + rest) <= 0.05 * 1.1
    assert budget.rest() == 0.0  # a new window starts after a rest
