"""The file index gives back what was kept of a file only while the file is the one it was read
from, and a row it cannot decode costs a read, never a wrong listing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sidemirror.index.database import INDEX_FILE
from sidemirror.index.files import FileIndex, FileStat


def _kept(tmp_path: Path) -> tuple[FileIndex, list[tuple[Path, FileStat]]]:
    index = FileIndex(tmp_path, "claude")
    listed = [(tmp_path / f"s{i}.jsonl", FileStat(100 + i, 1_000_000 + i)) for i in range(3)]
    index.put(
        [(path, stat, {"cwd": f"/p{i}", "mtime": 1.5}) for i, (path, stat) in enumerate(listed)]
    )
    return index, listed


def test_rows_come_back_in_the_order_asked_while_size_and_mtime_match(tmp_path: Path) -> None:
    index, listed = _kept(tmp_path)
    index.has_rows = True  # as a restart finds it
    assert index.get_many(list(reversed(listed))) == [
        {"cwd": "/p2", "mtime": 1.5},
        {"cwd": "/p1", "mtime": 1.5},
        {"cwd": "/p0", "mtime": 1.5},
    ]


def test_a_file_grown_or_touched_since_is_read_again(tmp_path: Path) -> None:
    index, listed = _kept(tmp_path)
    index.has_rows = True
    (p0, s0), (p1, s1), (p2, s2) = listed
    asked = [
        (p0, FileStat(s0.size + 1, s0.mtime_ns)),
        (p1, FileStat(s1.size, s1.mtime_ns + 1)),
        (p2, s2),
        (tmp_path / "never-kept.jsonl", s2),
    ]
    assert index.get_many(asked) == [None, None, {"cwd": "/p2", "mtime": 1.5}, None]


def test_a_row_that_does_not_decode_is_read_again(tmp_path: Path) -> None:
    index, listed = _kept(tmp_path)
    index.close()
    with sqlite3.connect(tmp_path / INDEX_FILE) as db:
        rows = db.execute("SELECT path FROM file_meta ORDER BY size").fetchall()
        # Torn JSON, and an escaped lone surrogate (valid JSON, not encodable as UTF-8).
        db.execute("UPDATE file_meta SET meta = ? WHERE path = ?", ('{"cwd": "/p', rows[0][0]))
        db.execute(
            "UPDATE file_meta SET meta = ? WHERE path = ?", ('{"cwd": "\\ud800"}', rows[1][0])
        )
    reopened = FileIndex(tmp_path, "claude")
    assert reopened.has_rows
    assert reopened.get_many(listed) == [None, None, {"cwd": "/p2", "mtime": 1.5}]
