"""Bytes damaged inside the search index's FTS5 segments, in the file on disk, between two
runs of a real server. Every b-tree page stays valid, so the `PRAGMA quick_check` run at open
passes: before the index checked FTS5's own integrity, every search that read the segment
answered 500, on every restart. Now the server finds it, moves the file aside, builds it again
from the transcripts, and search answers again; meanwhile it answers 503, never 500."""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import time
import urllib.error
import urllib.parse
from pathlib import Path

from tests.harness.server import Server
from tests.reliability.harness import CLAUDE_FIX, claude_project

from .report import record


def search(server: Server, word: str) -> tuple[int, int]:
    """(status, hits) of a search for `word` across every session."""
    try:
        body = server.get("/api/search?" + urllib.parse.urlencode({"q": word}))
    except urllib.error.HTTPError as error:
        return error.code, 0
    return 200, len(body["hits"])


def damage_segments(path: Path) -> None:
    """Random bytes over each FTS5 leaf block where it lies in the file: the pages' own
    structure is left as it was."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (page,) = db.execute("PRAGMA page_size").fetchone()
    blocks = [b for (b,) in db.execute("SELECT block FROM search_text_data WHERE id > 10")]
    db.close()
    data = bytearray(path.read_bytes())
    rng = random.Random(11)
    damaged = 0
    for block in blocks:
        if len(block) < 200:
            continue
        needle = block[16:48]
        at = data.find(needle)
        if at < 0 or data.count(needle) != 1:
            continue
        # Within the blob's first 450 bytes, which its b-tree cell always holds in one piece:
        # a blob longer than a page keeps only ~490 bytes in the cell, then a page number.
        end = min(at + min(len(block) - 48, 400), (at // page + 1) * page)
        for i in range(at + 32, end):
            data[i] = rng.randrange(256)
        damaged += 1
    assert damaged, "no segment found in the file"
    path.write_bytes(bytes(data))


def failing_words(path: Path) -> list[str]:
    """Words of the indexed text whose search now fails (read straight from the file)."""
    db = sqlite3.connect(path, isolation_level=None)
    assert db.execute("PRAGMA quick_check").fetchone() == ("ok",)
    text = " ".join(b for (b,) in db.execute("SELECT body FROM search_items"))
    words = sorted(set(re.findall(r"\b[a-z]{6,12}\b", text)))
    failing = []
    for word in words:
        try:
            db.execute("SELECT rowid FROM search_text WHERE search_text MATCH ? "
                       "ORDER BY rowid DESC LIMIT 50", (word,)).fetchall()  # fmt: skip
        except (sqlite3.DatabaseError, MemoryError):
            failing.append(word)
    db.close()
    return failing


def test_damage_inside_fts5_segments_is_found_and_rebuilt(tmp_path: Path) -> None:
    server = Server(tmp_path)
    project = claude_project(server)
    for transcript in sorted((CLAUDE_FIX / "sample-project").glob("*.jsonl")):
        shutil.copy(transcript, project / transcript.name)
    index_file = server.data / "index.sqlite3"
    server.start()
    try:
        server.wait_settled()
        deadline = time.monotonic() + 60
        while search(server, "orchestrator")[1] == 0:  # indexed (the backfill ran)
            assert time.monotonic() < deadline, "never indexed"
            time.sleep(0.1)
    finally:
        server.stop()
    damage_segments(index_file)
    failing = failing_words(index_file)
    assert failing, "the damage is not read by any search"
    word = failing[len(failing) // 2]

    server.start()
    statuses: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            status, hits = search(server, word)
            statuses.append(status)
            if status == 200 and hits:
                break
            assert time.monotonic() < deadline, statuses[-5:]
            time.sleep(0.05)
        healed = [search(server, w) for w in failing[:20]]
    finally:
        server.stop()
    assert set(statuses) <= {200, 503}, statuses
    assert all(status == 200 for status, _ in healed), healed
    assert index_file.with_name("index.sqlite3.corrupt").exists()
    assert "damaged" in server.stderr()
    record("search index damaged inside FTS5 segments (quick_check passes)",
           {"failing_words": len(failing), "answers_while_healing": len(statuses),
            "statuses": sorted(set(statuses))}, trials=1)  # fmt: skip
