"""A live session's merge order: one line per read batch, in the file at once, kept nowhere else.

A busy session appends a line tens of times a second for hours (issue 34's fleet: 400 lines/s
over 20 sessions). Each append opened and closed the file (~4 % of the server's CPU in the
fleet's profile) and kept the entry in a list nothing read again (about 100 bytes a batch).
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from sidemirror.sources.files import merge_order
from sidemirror.sources.files.merge_order import JOURNAL_OPEN_MAX, Entry, MergeOrder

BATCHES = 10_000


def _journal(path: Path) -> MergeOrder:
    order = MergeOrder(path, "e1")
    order.entries = [Entry("", 10, 7)]
    order.rewrite()
    return order


def test_appends_are_in_the_file_as_soon_as_made(tmp_path: Path) -> None:
    order = _journal(tmp_path / "order.jsonl")
    for end in range(20, 220, 20):
        order.append([Entry("agent-1" if end % 40 else "", end, 7)])
        # What a restart after a crash right now would replay: every line so far.
        replay = MergeOrder.read(order.path)
        assert replay is not None and replay.entries[-1] == Entry(
            "agent-1" if end % 40 else "", end, 7
        )
    replay = MergeOrder.read(order.path)
    assert replay is not None and len(replay.entries) == 11 and replay.epoch == "e1"


def test_a_rewrite_is_followed_by_appends_to_the_new_file(tmp_path: Path) -> None:
    order = _journal(tmp_path / "order.jsonl")
    order.append([Entry("", 20, 7)])
    rebuilt = MergeOrder(order.path, "e2")
    rebuilt.entries = [Entry("", 5, 8)]
    rebuilt.rewrite()  # a rebuild replaces the file
    rebuilt.append([Entry("", 30, 8)])
    replay = MergeOrder.read(order.path)
    assert replay is not None and replay.epoch == "e2"
    assert replay.entries == [Entry("", 5, 8), Entry("", 30, 8)]


def test_a_busy_journal_is_opened_once_and_keeps_no_entry_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order = _journal(tmp_path / "order.jsonl")
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str | Path, flags: int, mode: int = 0o777) -> int:
        opened.append(str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", counting_open)
    order.append([Entry("", 11, 7)])  # the descriptor, and the list's first growth, before
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for end in range(12, 12 + BATCHES):
            order.append([Entry("", end, 7)])
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown / BATCHES <= 4, f"{grown / BATCHES:.0f} bytes kept per batch"
    assert opened.count(str(order.path)) <= 2  # the first append's (create, else open)
    replay = MergeOrder.read(order.path)
    assert replay is not None and len(replay.entries) == BATCHES + 2


def test_open_journals_are_bounded(tmp_path: Path) -> None:
    orders = [_journal(tmp_path / f"order-{i}.jsonl") for i in range(JOURNAL_OPEN_MAX + 20)]
    for order in orders:
        order.append([Entry("", 20, 7)])
    assert len(merge_order.JOURNAL_FILES) <= JOURNAL_OPEN_MAX
    for order in orders:
        replay = MergeOrder.read(order.path)
        assert replay is not None and replay.entries[-1] == Entry("", 20, 7)
