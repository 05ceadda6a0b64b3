"""The search tables' writes on a real SQLite file: a batch whose rows come out of time order
(a fleet's live rows, in the order they were read) is written as if it came in order."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sidemirror.index import search_tables
from sidemirror.index.search_tables import Doc


def _rows(n: int) -> list[Doc]:
    return [
        Doc(
            "ws1",
            f"s{i % 20}",
            "e1",
            i,
            "assistant",
            f"2026-12-07T01:00:{i // 10:02d}.{i % 10}00Z",
            f"line {i} of the fleet: deploy widget build number {i}",
        )
        for i in range(n)
    ]


def _written(path: Path, rows: list[Doc]) -> tuple[int, list[int]]:
    """FTS5's stored pages after adding `rows` in one transaction, and a search's ids in order."""
    db = sqlite3.connect(path, isolation_level=None)
    search_tables.create(db)
    db.execute("BEGIN")
    search_tables.add(db, rows)
    db.execute("COMMIT")
    (pages,) = db.execute("SELECT count(*) FROM search_text_data").fetchone()
    seqs = [
        seq
        for (seq,) in db.execute(
            "SELECT seq FROM search_items WHERE id IN "
            "(SELECT rowid FROM search_text WHERE search_text MATCH 'widget') ORDER BY id"
        )
    ]
    db.close()
    return pages, seqs


def test_a_batch_out_of_time_order_is_written_as_one_in_order(tmp_path: Path) -> None:
    rows = _rows(400)
    in_order = _written(tmp_path / "a.db", rows)
    # Reversed, every row's id is below the one before: FTS5 starts a segment at each one
    # unless the rows are put in order first (automerge folds most back: 12 pages against 9).
    reversed_ = _written(tmp_path / "b.db", rows[::-1])
    assert reversed_ == in_order
    assert in_order[1] == list(range(400))  # every row found, oldest first by its time
