"""ItemLog keeps the newest items in memory and spills older ones, with identical reads."""

from __future__ import annotations

import errno
import os
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


# --- a full disk (issue 29, finding 8): ids and content stay exact ---


def _refuse_writes(monkeypatch: pytest.MonkeyPatch, *, partial: bool) -> None:
    """pwrite fails as a full disk does: at once, or after taking part of the line."""
    real = os.pwrite

    def full(fd: int, data: bytes | memoryview, offset: int) -> int:
        if partial and len(data) > 8:
            return real(fd, bytes(data[: len(data) // 2]), offset)  # then ENOSPC on the rest
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)


@pytest.mark.parametrize("partial", [False, True])
def test_a_spill_the_disk_refuses_keeps_every_id_and_content_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partial: bool
) -> None:
    log = ItemLog(tmp_path / "spill.jsonl", window=10)
    items = _items(40)
    for item in items[:20]:
        log.append(item)
    with monkeypatch.context() as m:
        _refuse_writes(m, partial=partial)
        for item in items[20:30]:
            log.append(item)  # never raises: the item stays in memory
        assert [log[log.index_of(i.seq) or 0] for i in items[:30]] == items[:30]
    for item in items[30:]:
        log.append(item)
    assert list(log) == items and [log.index_of(i.seq) for i in items] == list(range(40))
    assert len(log._recent) == 10  # the backlog spilled once the disk had room


def test_short_pwrites_are_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.pwrite
    monkeypatch.setattr(os, "pwrite", lambda fd, data, off: real(fd, bytes(data[:7]), off))
    log = ItemLog(tmp_path / "spill.jsonl", window=3)
    items = _items(12)
    for item in items:
        log.append(item)
    assert list(log) == items


def test_reserve_refuses_on_a_full_disk_with_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = ItemLog(tmp_path / "spill.jsonl", window=5)
    items = _items(12)
    for item in items[:8]:
        log.append(item)

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "posix_fallocate", full)
        with pytest.raises(OSError) as refused:
            log.reserve(items[8:])
        assert refused.value.errno == errno.ENOSPC
    assert list(log) == items[:8]
    log.reserve(items[8:])
    for item in items[8:]:
        log.append(item)
    assert list(log) == items


def test_reserved_room_covers_every_spill_it_was_made_for(tmp_path: Path) -> None:
    log = ItemLog(tmp_path / "spill.jsonl", window=4)
    assert log._allocated == 0
    log.reserve(_items(4))  # fits in the window: nothing to reserve, no file made
    assert not (tmp_path / "spill.jsonl").exists()
    items = _items(30)
    for start in range(0, 30, 7):  # batches that spill known and not-yet-stored items
        batch = items[start : start + 7]
        log.reserve(batch)
        for item in batch:
            log.append(item)
        assert log._end <= log._allocated  # every spill landed in reserved room
    assert list(log) == items
