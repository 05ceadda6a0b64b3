"""A damaged search index heals itself: damage inside FTS5 segments (every b-tree page still
valid, so `PRAGMA quick_check` passes) found by FTS5's integrity check after open, or by a
search that reads it, has the file moved aside and built again; meanwhile searches raise
IndexStarting (the route's 503), never a raw SQLite error (a 500)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from sidemirror.index.database import index_path
from sidemirror.index.search import SearchIndex
from sidemirror.index.search_reads import IndexStarting
from sidemirror.index.search_tables import Doc

from tests.harness.waiting import wait_until

WORDS = [f"word{n}" for n in range(400)]


def docs(n: int) -> list[Doc]:
    rng = random.Random(n)
    return [
        Doc("ws", f"s{i % 7}", "e1", i + 1, "assistant", f"2026-11-30T10:{i % 60:02d}:00Z",
            " ".join(rng.choice(WORDS) for _ in range(40)))
        for i in range(n)
    ]  # fmt: skip


def damage_segments(path: Path) -> None:
    """Random bytes over the middle of every FTS5 leaf block, written through SQLite so every
    page stays a valid b-tree page: what a bad sector inside a blob looks like to quick_check."""
    rng = random.Random(7)
    db = sqlite3.connect(path, isolation_level=None)
    for rowid, block in db.execute("SELECT id, block FROM search_text_data WHERE id > 10"):
        if len(block) > 64:
            mid = bytes(rng.randrange(256) for _ in range(len(block) - 32))
            db.execute("UPDATE search_text_data SET block = ? WHERE id = ?",
                       (block[:16] + mid + block[-16:], rowid))  # fmt: skip
    assert db.execute("PRAGMA quick_check").fetchone() == ("ok",)
    db.close()


def filled(index: SearchIndex) -> None:
    index.add(docs(2000))
    assert index.wait_written(index.written(), timeout=30)


def test_a_search_that_reads_a_damaged_segment_has_the_index_rebuilt(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path)
    index.start()
    try:
        filled(index)
        assert index.search("word7", limit=5)
        damage_segments(index_path(tmp_path))
        failed = 0
        for word in WORDS:
            try:
                index.search(word, limit=5)
            except IndexStarting:
                failed += 1
                break
        assert failed, "the damage was never read"
        wait_until(lambda: index.ready and index.rebuilds == 1, 30)
        assert index_path(tmp_path).with_name("index.sqlite3.corrupt").exists()
        assert index.search("word7", limit=5) == []  # a fresh file, filled again by the feed
        filled(index)
        assert index.search("word7", limit=5)
    finally:
        index.stop()


def reopened(tmp_path: Path, *, damaged: bool) -> SearchIndex:
    """An index filled by one run, damaged or not, opened by the next."""
    first = SearchIndex(tmp_path)
    first.start()
    filled(first)
    first.stop()
    if damaged:
        damage_segments(index_path(tmp_path))
    second = SearchIndex(tmp_path)
    second.start()
    return second


def test_damage_found_by_the_integrity_check_after_open(tmp_path: Path) -> None:
    index = reopened(tmp_path, damaged=True)
    try:
        wait_until(lambda: index.rebuilds == 1 and index.ready, 30)
        filled(index)
        assert all(index.search(w, limit=5) for w in ("word1", "word399"))
    finally:
        index.stop()


def test_a_sound_index_is_not_rebuilt(tmp_path: Path) -> None:
    index = reopened(tmp_path, damaged=False)
    try:
        index.add(docs(1))  # written after the check, the writer's first job
        assert index.wait_written(index.written(), timeout=30)
        assert index.rebuilds == 0 and index.search("word7", limit=5)
    finally:
        index.stop()
