"""ItemLog keeps the newest items in memory and spills older ones, with identical reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from sidemirror.core.item_log import ItemLog
from sidemirror.core.models import AssistantEvent, ToolResultEvent
from sidemirror.core.projection import Projector


def _items(n: int) -> list[AssistantEvent | ToolResultEvent]:
    out: list[AssistantEvent | ToolResultEvent] = []
    for i in range(n):
        item: AssistantEvent | ToolResultEvent
        if i % 3:
            item = AssistantEvent(content=f"text {i} " + "é" * (i % 7))
        else:
            item = ToolResultEvent(tool_use_id=f"t{i}", output="out\n" * i, is_error=i % 2 == 0)
        item.seq, item.id = i + 1, f"ep.{i + 1}"
        out.append(item)
    return out


def test_spilled_items_read_back_identically(tmp_path: Path) -> None:
    log = ItemLog(tmp_path / "spill.jsonl", window=10)
    items = _items(55)
    for item in items:
        log.append(item)
    assert len(log) == 55 and len(log._recent) == 10  # memory holds the window only
    assert [log[i] for i in range(55)] == items
    assert list(log) == items and log[-1] == items[-1]
    project = Projector(20).to_json
    assert [log.wire_json(i, project) for i in range(55)] == [project(i) for i in items]
    assert log.item_and_wire(3, project) == (items[3], project(items[3]))  # spilled
    assert log.item_and_wire(54, project) == (items[54], project(items[54]))  # in memory
    assert log.newest(3) == items[-3:]
    with pytest.raises(IndexError):
        log[55]


def test_clear_starts_over_and_in_memory_mode_never_spills(tmp_path: Path) -> None:
    log = ItemLog(tmp_path / "spill.jsonl", window=4)
    for item in _items(9):
        log.append(item)
    log.clear()
    assert len(log) == 0 and not log
    fresh = _items(6)
    for item in fresh:
        log.append(item)
    assert list(log) == fresh
    assert (tmp_path / "spill.jsonl").stat().st_size < 2000  # truncated, not appended to
    memory = ItemLog(None, window=2)
    for item in _items(7):
        memory.append(item)
    assert len(memory._recent) == 7


def test_items_are_found_by_seq_dense_or_sparse(tmp_path: Path) -> None:
    dense = ItemLog(tmp_path / "dense.jsonl", window=4)
    for item in _items(9):
        dense.append(item)
    assert [dense.index_of(s) for s in (1, 5, 9)] == [0, 4, 8]
    assert dense.index_of(0) is None and dense.index_of(10) is None
    assert dense.last_seq == 9 and dense.seq_at(2) == 3

    # A transcript numbers items by byte position: seqs grow but skip; some items are spilled.
    sparse = ItemLog(tmp_path / "sparse.jsonl", window=4)
    items = _items(9)
    for n, item in enumerate(items):
        item.seq = 1_000_000 + n * 70_000 + (n % 2)
        sparse.append(item)
    assert [sparse.index_of(i.seq) for i in items] == list(range(9))
    assert sparse[sparse.index_of(items[1].seq) or 0] == items[1]  # read back from the spill
    assert sparse.index_of(items[3].seq + 1) is None and sparse.index_of(1) is None
    assert sparse.last_seq == items[-1].seq and sparse.seq_at(0) == items[0].seq
    with pytest.raises(ValueError, match="must increase"):
        sparse.append(_items(1)[0])  # seq 1, after a larger one

    # A log that starts dense and then skips keeps every earlier seq.
    mixed = ItemLog(None)
    first = _items(3)
    for item in first:
        mixed.append(item)
    late = _items(1)[0]
    late.seq = 50
    mixed.append(late)
    assert [mixed.seq_at(i) for i in range(4)] == [1, 2, 3, 50]
    assert mixed.index_of(3) == 2 and mixed.index_of(50) == 3 and mixed.index_of(4) is None
    mixed.clear()
    assert mixed.last_seq == 0 and mixed.index_of(1) is None
