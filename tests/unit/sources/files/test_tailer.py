"""The JSONL tailer: partial lines, truncation and replacement, oversized and garbage lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.sources.files.tailer import JsonlTailer, read_edge_records

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

FIXTURE = FIXTURE_ROOT / "claude" / "incremental-subagents" / "turn-1.jsonl"


def values(batch_records: list[tuple[int, object]]) -> list[object]:
    return [v for _end, v in batch_records]


def test_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b":')
    tailer = JsonlTailer(path)
    first = tailer.poll()
    assert values(first.records) == [{"a": 1}]
    assert first.offset == 9
    with open(path, "ab") as fh:
        fh.write(b' 2}\n{"c": 3}')
    assert values(tailer.poll().records) == [{"b": 2}]
    with open(path, "ab") as fh:
        fh.write(b"\n")
    second = tailer.poll()
    assert values(second.records) == [{"c": 3}]
    assert second.offset == path.stat().st_size
    assert tailer.poll().records == []


def test_truncation_and_replacement_restart_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n')
    resets: list[Path] = []
    tailer = JsonlTailer(path, on_reset=resets.append)
    assert len(tailer.poll().records) == 2
    path.write_bytes(b'{"x": 1}\n')  # truncated in place: same inode, smaller
    batch = tailer.poll()
    assert batch.reset and resets == [path]
    assert values(batch.records) == [{"x": 1}]
    other = tmp_path / "new.jsonl"
    other.write_bytes(b'{"y": 1}\n{"y": 2}\n{"y": 3}\n')
    os.replace(other, path)  # replaced: a new inode, even though it is larger
    batch = tailer.poll()
    assert batch.reset and len(resets) == 2
    assert values(batch.records) == [{"y": 1}, {"y": 2}, {"y": 3}]


def test_oversized_line_is_read_across_polls_and_reported(tmp_path: Path) -> None:
    """Over the cap, a line is read in bounded memory (tests/unit/sources/files/test_long_line.py)
    and reported, not dropped; its short values come through as they are."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"ok": 1}\n{"big": "' + b"x" * 150)
    tailer = JsonlTailer(path, max_line_bytes=100)
    batch = tailer.poll()
    assert values(batch.records) == [{"ok": 1}] and batch.errors == 0
    with open(path, "ab") as fh:
        fh.write(b"y" * 500)
    assert tailer.poll().records == [] and tailer.offset == 10  # waits for its newline
    with open(path, "ab") as fh:
        fh.write(b'"}\n{"ok": 2}\n' + b'{"also_big": "' + b"z" * 200 + b'"}\n')
    batch = tailer.poll()
    assert values(batch.records) == [
        {"big": "x" * 150 + "y" * 500},
        {"ok": 2},
        {"also_big": "z" * 200},
    ]
    assert [(p.offset, p.reason) for p in batch.problems] == [
        (10, "line of 0.0 MB capped"),
        (682, "line of 0.0 MB capped"),
    ]
    assert batch.offset == path.stat().st_size


def test_garbage_and_invalid_utf8_are_counted_never_raised(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'not json\n\xff\xfe{"a"\n\n   \n{"fine": true}\n[1, 2]\n')
    batch = JsonlTailer(path).poll()
    assert values(batch.records) == [{"fine": True}, [1, 2]]
    assert batch.errors == 2


def test_missing_file_is_reported_not_raised(tmp_path: Path) -> None:
    batch = JsonlTailer(tmp_path / "absent.jsonl").poll()
    assert batch.missing and batch.records == []


def test_limit_stops_at_a_mark(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    tailer = JsonlTailer(path)
    assert values(tailer.poll(limit=18).records) == [{"a": 1}, {"a": 2}]
    assert values(tailer.poll().records) == [{"a": 3}]


def test_edge_records_drop_cut_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"n": i, "pad": "p" * 50}) for i in range(100)]
    path.write_text("\n".join(lines) + '\n{"partial":')
    head = read_edge_records(path, from_end=False, max_bytes=300)
    tail = read_edge_records(path, from_end=True, max_bytes=300)
    assert [r["n"] for r in head] == [0, 1, 2, 3]
    assert [r["n"] for r in tail][-1] == 99
    assert all("partial" not in r for r in tail)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=40))
def test_any_chunking_yields_each_line_once_in_order(tmp_path_factory, cuts: list[int]) -> None:  # type: ignore[no-untyped-def]
    data = FIXTURE.read_bytes()
    path = tmp_path_factory.mktemp("chunks") / "t.jsonl"
    path.write_bytes(b"")
    tailer = JsonlTailer(path)
    got: list[object] = []
    pos = 0
    for cut in cuts + [len(data)]:
        end = min(len(data), pos + cut)
        with open(path, "ab") as fh:
            fh.write(data[pos:end])
        pos = end
        got += values(tailer.poll().records)
        if pos >= len(data):
            break
    assert got == [json.loads(line) for line in data.splitlines()]
