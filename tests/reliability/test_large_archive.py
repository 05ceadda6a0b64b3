"""A heavy user's archive: the server answers before it has indexed the sessions on disk.

A few thousand small real sessions (the head of a fixture transcript, each with its own session
id and cwd, modification times spread over a month): `/health` answers as soon as the server
listens and reports `indexing` not yet done; `/api/workspaces` answers meanwhile, and grows
newest first (every partial listing is exactly the most recently modified sessions); a line
appended to the oldest session while indexing runs is mirrored, and SIGTERM stays fast.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.harness import MID_SESSION, fixture_lines

from .report import record
from .test_crash_restart import ws_id

SESSIONS = 3000
FOLDERS = 30
HEAD_BYTES = 6000  # small sessions: the first lines of a real one
HEALTH_LIMIT_S = 0.5
SID = MID_SESSION.stem.encode()
CWD = b'"cwd":"/path/to/Demo"'


def _head() -> bytes:
    lines = fixture_lines(MID_SESSION)
    head = lines[0]
    for line in lines[1:]:
        if len(head) + len(line) > HEAD_BYTES:
            break
        head += line
    return head


def _cwd(i: int) -> str:
    return f"/home/heavy/project-{i:05d}"


def write_archive(root: Path) -> None:
    """Session i is modified i minutes after session 0: the highest i is the newest."""
    head = _head()
    now = time.time()
    for i in range(SESSIONS):
        folder = root / f"-folder-{i % FOLDERS:02d}"
        folder.mkdir(exist_ok=True)
        sid = f"{i:08d}-0000-4000-8000-000000000000"
        data = head.replace(SID, sid.encode()).replace(CWD, f'"cwd":"{_cwd(i)}"'.encode())
        path = folder / f"{sid}.jsonl"
        path.write_bytes(data)
        when = now - 30 * 86400 + i * 60
        os.utime(path, (when, when))


def test_health_answers_before_indexing_and_the_listing_grows_newest_first(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path)
    write_archive(server.claude)
    newest = [_cwd(i) for i in reversed(range(SESSIONS))]
    oldest = server.claude / "-folder-00" / "00000000-0000-4000-8000-000000000000.jsonl"
    server.start()  # returns once the server says it listens
    try:
        t0 = time.monotonic()
        health = server.health()
        health_s = time.monotonic() - t0
        assert health["status"] == "ok"
        first = health["indexing"]
        assert first["total"] is None or first["done"] < first["total"], first
        # While indexing: the listing answers, and holds the newest sessions and only them.
        with oldest.open("ab") as fh:
            fh.write(fixture_lines(MID_SESSION)[-1].replace(SID, oldest.stem.encode()))
        appended = time.monotonic()
        partial = []
        while True:
            indexing = server.health()["indexing"]
            dirs = [w["directory"] for w in server.get("/api/workspaces")["workspaces"]]
            if indexing["total"] is not None and indexing["done"] >= indexing["total"]:
                break
            # A live change may list the oldest session early; every other entry is the newest.
            indexed = [d for d in dirs if d != _cwd(0)]
            assert set(indexed) == set(newest[: len(indexed)]), "not newest first"
            partial.append(len(indexed))
        assert any(0 < n < SESSIONS for n in partial), partial
        assert indexing == {"done": SESSIONS, "total": SESSIONS, "read": SESSIONS}
        listed_s = time.monotonic() - t0
        assert sorted(dirs) == sorted(newest)
        # The line appended during indexing is mirrored: one item more than an untouched twin.
        twin = f"{1:08d}-0000-4000-8000-000000000000"
        base = len(server.snapshot(ws_id(_cwd(1)), twin)["items"])
        wait_until(
            lambda: len(server.snapshot(ws_id(_cwd(0)), oldest.stem)["items"]) > base,
            10,
            "the line appended during indexing",
        )
        mirrored_s = time.monotonic() - appended
        assert health_s <= HEALTH_LIMIT_S, health_s
    finally:
        server.stop()
    record(
        "large archive: answers before indexing",
        {
            "sessions": SESSIONS,
            "health_s": round(health_s, 3),
            "listed_s": round(listed_s, 3),
            "partial_listings": len(partial),
            "append_mirrored_s": round(mirrored_s, 3),
        },
        trials=1,
    )


def test_sigterm_during_indexing_is_fast_and_clean(tmp_path: Path) -> None:
    server = Server(tmp_path)
    write_archive(server.claude)
    server.start()
    try:
        indexing = server.health()["indexing"]
        assert indexing["total"] is None or indexing["done"] < indexing["total"], indexing
        assert server.proc is not None
        t = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(10) == 0
        assert time.monotonic() - t < 2.0
        assert "Traceback" not in server.stderr()
    finally:
        server.stop()
