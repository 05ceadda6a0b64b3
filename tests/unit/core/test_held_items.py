"""The shared budget bounds the items every log holds in memory, and reads stay exact."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from sidemirror.core import item_log
from sidemirror.core.held_items import SPILL_STEP, HeldItems
from sidemirror.core.item_log import ItemLog
from sidemirror.core.models import AssistantEvent


def _item(seq: int) -> AssistantEvent:
    item = AssistantEvent(content=f"line {seq}")
    item.seq, item.id = seq, f"ep.{seq}"
    return item


def _fleet(tmp_path: Path, budget: HeldItems, sessions: int) -> list[ItemLog]:
    return [ItemLog(tmp_path / f"s{i}.jsonl", budget=budget) for i in range(sessions)]


def test_a_fleet_holds_the_budget_not_a_window_each(tmp_path: Path) -> None:
    budget = HeldItems(limit=200, floor=10)
    logs = _fleet(tmp_path, budget, 8)
    for seq in range(1, 301):  # 8 × 300 items, far under each log's window of 2,048
        for log in logs:
            log.append(_item(seq))
    held = [log.held for log in logs]
    assert sum(held) == budget.total <= 200
    assert min(held) >= 10
    # Every item, spilled or held, reads back as written.
    for log in logs:
        assert [item.content for item in log] == [f"line {s}" for s in range(1, 301)]


def test_the_busiest_log_gives_up_items_first(tmp_path: Path) -> None:
    budget = HeldItems(limit=100, floor=5)
    quiet, busy = _fleet(tmp_path, budget, 2)
    for seq in range(1, 21):
        quiet.append(_item(seq))
    for seq in range(1, 200):
        busy.append(_item(seq))
    assert quiet.held == 20  # untouched: the busy log had more to give
    assert busy.held + quiet.held == budget.total <= 100


def test_a_trim_spills_a_few_items_per_append_not_all_at_once(tmp_path: Path) -> None:
    budget = HeldItems(limit=400, floor=5)
    logs = _fleet(tmp_path, budget, 4)
    spilled_per_append = []
    highest = 0
    for seq in range(1, 1001):
        for log in logs:
            before = budget.total
            log.append(_item(seq))
            spilled_per_append.append(before + 1 - budget.total)
            highest = max(highest, budget.total)
    # A trim's hundred items went out a few at a time, and the total never ran away meanwhile.
    assert max(spilled_per_append) == SPILL_STEP
    assert highest <= 400 + 1
    assert sum(spilled_per_append) == 4000 - budget.total
    for log in logs:
        assert [item.content for item in log] == [f"line {s}" for s in range(1, 1001)]


def test_a_trim_left_unfinished_keeps_no_closed_log_alive(tmp_path: Path) -> None:
    budget = HeldItems(limit=100, floor=5)
    (log,) = _fleet(tmp_path, budget, 1)
    for seq in range(1, 102):
        log.append(_item(seq))
    assert budget.total == 101 - SPILL_STEP > 75  # the trim has begun, and the appends stop
    gone = weakref.ref(log)
    log.close()
    del log
    gc.collect()
    assert gone() is None
    assert budget.total == 0


def test_floors_above_the_limit_do_not_trim_on_every_append(tmp_path: Path) -> None:
    budget = HeldItems(limit=40, floor=10)
    logs = _fleet(tmp_path, budget, 6)  # 6 floors of 10 = 60 > the limit of 40
    trims = 0
    real_trim = budget._trim

    def counting_trim() -> None:
        nonlocal trims
        trims += 1
        real_trim()

    budget._trim = counting_trim  # type: ignore[method-assign]
    appended = 0
    for seq in range(1, 101):
        for log in logs:
            log.append(_item(seq))
            appended += 1
    assert all(log.held >= 10 for log in logs)
    assert budget.total <= 60 + 40 // 4  # the floors, and at most a quarter limit more
    assert trims <= appended // (40 // 4) + 1  # once per quarter limit, not per append


def test_clearing_or_closing_a_log_returns_its_items_to_the_budget(tmp_path: Path) -> None:
    budget = HeldItems(limit=1000, floor=10)
    first, second = _fleet(tmp_path, budget, 2)
    for seq in range(1, 31):
        first.append(_item(seq))
        second.append(_item(seq))
    assert budget.total == 60
    first.clear()
    assert budget.total == 30
    second.close()
    assert budget.total == 0


def test_a_log_that_cannot_spill_is_not_counted(tmp_path: Path) -> None:
    budget = HeldItems(limit=10, floor=1)
    memory = ItemLog(None, budget=budget)
    for seq in range(1, 51):
        memory.append(_item(seq))
    assert budget.total == 0 and memory.held == 50


def test_one_session_alone_keeps_its_whole_window(tmp_path: Path) -> None:
    budget = HeldItems(limit=50, floor=5)
    (alone,) = _fleet(tmp_path, budget, 1)
    alone.window = 50
    for seq in range(1, 201):
        alone.append(_item(seq))
    assert alone.held == 50 == budget.total  # its window spills first: the budget never trims


def test_a_trims_step_goes_to_the_spill_file_in_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    real = item_log.pwrite_all

    def counted(fd: int, data: bytes, offset: int) -> None:
        writes.append(data.count(b"\n"))
        real(fd, data, offset)

    monkeypatch.setattr(item_log, "pwrite_all", counted)
    budget = HeldItems(limit=100, floor=5)
    (log,) = _fleet(tmp_path, budget, 1)
    for seq in range(1, 501):
        log.append(_item(seq))
    assert sum(writes) == 500 - log.held
    assert max(writes) == SPILL_STEP  # each append's share of a trim: one write, not one an item
    assert [item.content for item in log] == [f"line {s}" for s in range(1, 501)]
