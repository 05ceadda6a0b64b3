"""The search index on a real SQLite file: hits newest first by the items' own time whatever
order they were written in, one session searched alone, tables of an older version rebuilt
(the rest of the file kept), and live rows written while a long backfill is still queued."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sidemirror.index.database import open_index
from sidemirror.index.search import (
    CHUNK_ROWS,
    QUEUE_CHUNKS,
    WRITER_NICE,
    SearchIndex,
)
from sidemirror.index.search_feed import MAX_BODY_CHARS
from sidemirror.index.search_tables import INSERT_ROWS, Doc


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    started = SearchIndex(tmp_path)
    started.start()
    yield started
    started.stop()


def doc(session: str, seq: int, ts: str, body: str, workspace: str = "ws1") -> Doc:
    return Doc(workspace, session, "e1", seq, "assistant", ts, body)


def written(index: SearchIndex) -> None:
    assert index.wait_written(index.written(), timeout=30)


def hits(index: SearchIndex, query: str, **where: str) -> list[tuple[str, int]]:
    return [(h.session, h.seq) for h in index.search(query, limit=50, **where)]


def test_hits_come_newest_first_by_item_time_not_by_when_they_were_indexed(
    index: SearchIndex,
) -> None:
    # The backfill reads the newest session first; an older one comes after, and a live line
    # of the newest last. Same-millisecond items keep their order in the session.
    index.add([doc("new", 1, "2026-11-30T10:00:00.000Z", "deploy the widget")])
    index.add([doc("new", 2, "2026-11-30T10:00:00.000Z", "deploy again")])
    index.add([doc("old", 1, "2026-01-02T08:00:00Z", "first deploy")])
    index.add([doc("old", 2, "2026-01-02T09:30:00+01:00", "second deploy")])
    index.add_live([doc("new", 3, "2026-11-30T10:05:00.250Z", "deploy live")])
    index.add([doc("odd", 1, "not a time", "deploy sometime")])
    written(index)
    assert hits(index, "deploy") == [
        ("new", 3),
        ("new", 2),
        ("new", 1),
        ("old", 2),  # 08:30 UTC
        ("old", 1),
        ("odd", 1),  # no readable time: the oldest
    ]
    assert hits(index, "deploy", workspace="ws1", session="old") == [("old", 2), ("old", 1)]
    # A row already held (the backfill and the live tap both saw it) is kept once.
    index.add([doc("old", 1, "2026-01-02T08:00:00Z", "first deploy")])
    written(index)
    assert index.count() == 6


def test_one_session_alone_even_when_others_share_its_time_span(index: SearchIndex) -> None:
    rows = [
        doc(session, seq, f"2026-05-01T12:{seq:02d}:00Z", f"common word {session}")
        for seq in range(1, 40)
        for session in ("a", "b", "c")
    ]
    index.add(rows)
    index.add([doc("d", 1, "2026-05-01T12:30:00Z", "common word", workspace="ws2")])
    written(index)
    found = index.search("common", limit=50, workspace="ws1", session="b")
    assert [h.seq for h in found] == list(range(39, 0, -1))
    assert {h.session for h in found} == {"b"}
    assert index.search("common", limit=5, workspace="ws2", session="b") == []
    assert index.search("common", limit=5, workspace="ws1", session="none") == []


def test_tables_of_an_older_version_are_rebuilt_and_the_rest_of_the_file_kept(
    tmp_path: Path,
) -> None:
    old = open_index(tmp_path)
    old.executescript(
        """
        CREATE TABLE files(path TEXT PRIMARY KEY);
        INSERT INTO files VALUES ('/kept');
        CREATE TABLE search_items(id INTEGER PRIMARY KEY, workspace TEXT, session TEXT,
            epoch TEXT, seq INTEGER, type TEXT, ts TEXT, body TEXT);
        CREATE INDEX search_items_ts ON search_items(ts);
        INSERT INTO search_items VALUES (1, 'ws1', 's', 'e1', 1, 'user', '', 'stale row');
        CREATE TABLE search_sessions(workspace TEXT, session TEXT, epoch TEXT, marker REAL);
        INSERT INTO search_sessions VALUES ('ws1', 's', 'e1', 1.0);
        """
    )
    old.close()
    index = SearchIndex(tmp_path)
    index.start()
    try:
        assert index.count() == 0 and index.marks == {}  # filled again from the files
        index.add_live([doc("s", 1, "2026-01-01T00:00:00Z", "fresh row")])
        written(index)
        assert hits(index, "fresh") == [("s", 1)] and hits(index, "stale") == []
    finally:
        index.stop()
    check = sqlite3.connect(tmp_path / "index.sqlite3")
    assert check.execute("SELECT path FROM files").fetchall() == [("/kept",)]
    check.close()
    again = SearchIndex(tmp_path)  # of this version now: kept as it is
    again.start()
    try:
        assert again.count() == 1
    finally:
        again.stop()


def test_a_live_row_is_written_before_a_long_queued_backfill(index: SearchIndex) -> None:
    # Bulky rows, more than the backlog holds: the backfill keeps the writer busy a while.
    body = " ".join(f"word{n}" for n in range(300))
    backfill = [
        doc(f"s{n // CHUNK_ROWS}", n, "2026-01-01T00:00:00Z", body)
        for n in range(CHUNK_ROWS * QUEUE_CHUNKS * 2)
    ]
    feeder = threading.Thread(target=index.add, args=(backfill,))
    feeder.start()
    try:
        while index.count() == 0:  # the writer is into the backfill
            time.sleep(0.01)
        index.add_live([doc("live", 1, "2026-12-01T00:00:00Z", "zebra")])
        live_ticket = (index.written()[0], 0)  # the live rows only
        assert index.wait_written(live_ticket, timeout=30)
        assert hits(index, "zebra") == [("live", 1)]
        assert index.count() < len(backfill)  # written ahead of most of the backfill
    finally:
        feeder.join(timeout=120)
    written(index)
    assert index.count() == len(backfill) + 1


def test_a_live_batch_is_written_whole_across_statements(index: SearchIndex) -> None:
    # A gather of a fleet's rows is bound a statement of `INSERT_ROWS` at a time and the rest
    # row by row: every row lands, in order, the longest a row can be too.
    long_body = "needle " + "x" * MAX_BODY_CHARS
    rows = [doc("s", 1, "2026-05-01T12:00:00Z", long_body)]
    last = 3 * INSERT_ROWS + 5
    rows += [doc("s", n, f"2026-05-01T12:00:01.{n:03d}Z", f"needle {n}") for n in range(2, last)]
    index.add_live(rows[::-1])  # out of time order, as a fleet's rows can reach the writer
    written(index)
    found = index.search("needle", limit=last, workspace="ws1", session="s")
    assert [h.seq for h in found] == list(range(last - 1, 0, -1))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice is Linux's")
def test_the_writer_thread_yields_the_cpu_to_the_event_loop(index: SearchIndex) -> None:
    writer = index._thread
    assert writer is not None and writer.native_id is not None
    ours = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, writer.native_id) == min(19, ours + WRITER_NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == ours  # ours untouched
