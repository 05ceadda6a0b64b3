"""A heavy user's archive across restarts: only the files that changed are read again.

The same few thousand small real sessions as test_large_archive.py. A first start reads every
file; after a restart on the same data dir, `/health` `indexing.read` counts only the files
changed, added or touched while the server was down, and the listing is the same, with the
changed session's new title. A corrupt index file is moved aside and rebuilt: every session is
still listed (read again), and the next restart reads nothing again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.harness import MID_SESSION, fixture_lines

from .report import record
from .test_crash_restart import ws_id
from .test_large_archive import FOLDERS, SESSIONS, SID, _cwd, write_archive

INDEX_FILE = "index.sqlite3"


def _session_file(root: Path, i: int) -> Path:
    """Session i's file; past the archive's folders, a new folder of its own."""
    sid = f"{i:08d}-0000-4000-8000-000000000000"
    folder = f"-folder-{i % FOLDERS:02d}" if i <= SESSIONS else f"-new-{i:05d}"
    return root / folder / f"{sid}.jsonl"


def _fully_indexed(server: Server) -> dict[str, Any]:
    state: dict[str, Any] = {}

    def done() -> bool:
        state.update(server.health()["indexing"])
        return state["total"] is not None and state["done"] >= state["total"]

    wait_until(done, 120, "indexing to finish")
    return state


def _listing(server: Server) -> set[str]:
    return {ws["directory"] for ws in server.get("/api/workspaces")["workspaces"]}


def _titles(server: Server, i: int) -> list[str | None]:
    """The titles of the sessions listed for session `i`'s workspace."""
    sessions = server.get(f"/workspace/{ws_id(_cwd(i))}/sessions")["sessions"]
    return [s["title"] for s in sessions]


def _titled(path: Path, title: str) -> None:
    """Append a custom-title record (what `/rename` writes), so the listing's title changes."""
    record = {"type": "custom-title", "customTitle": title, "sessionId": path.stem}
    with path.open("ab") as fh:
        fh.write(json.dumps(record).encode() + b"\n")


def _new_session(root: Path, i: int) -> Path:
    path = _session_file(root, i)
    head = b"".join(fixture_lines(MID_SESSION)[:4]).replace(SID, path.stem.encode())
    path.write_bytes(head.replace(b'"cwd":"/path/to/Demo"', f'"cwd":"{_cwd(i)}"'.encode()))
    return path


def test_a_restart_reads_only_the_files_that_changed(tmp_path: Path) -> None:
    server = Server(tmp_path)
    write_archive(server.claude)
    server.start()
    try:
        first = _fully_indexed(server)
        assert first == {"done": SESSIONS, "total": SESSIONS, "read": SESSIONS}
        before = _listing(server)
        title, untouched = _titles(server, 7), _titles(server, 6)
    finally:
        server.stop()
    assert len(before) == SESSIONS

    # While the server is down: one session renamed, one touched, one added, one removed.
    renamed = _session_file(server.claude, 7)
    _titled(renamed, "Renamed while the server was down")
    touched = _session_file(server.claude, 8)
    later = time.time()
    os.utime(touched, (later, later))
    _new_session(server.claude, SESSIONS)
    _session_file(server.claude, 9).unlink()

    server.start()
    try:
        again = _fully_indexed(server)
        after = _listing(server)
        renamed_titles = _titles(server, 7)
        untouched_titles = _titles(server, 6)
    finally:
        server.stop()
    assert again == {"done": SESSIONS, "total": SESSIONS, "read": 3}, again
    assert after == (before - {_cwd(9)}) | {_cwd(SESSIONS)}
    assert title != ["Renamed while the server was down"]
    assert renamed_titles == ["Renamed while the server was down"]
    assert untouched_titles == untouched, "a title taken from the index is the one read before"


def test_a_corrupt_index_is_rebuilt_and_no_session_is_lost(tmp_path: Path) -> None:
    server = Server(tmp_path)
    write_archive(server.claude)
    server.start()
    try:
        _fully_indexed(server)
        before = _listing(server)
    finally:
        server.stop()
    index = server.data / INDEX_FILE
    data = bytearray(index.read_bytes())
    data[: len(data) // 2] = b"\xa5" * (len(data) // 2)  # the header and half the pages
    index.write_bytes(bytes(data))

    server.start()
    try:
        rebuilt = _fully_indexed(server)
        assert rebuilt == {"done": SESSIONS, "total": SESSIONS, "read": SESSIONS}
        assert _listing(server) == before
    finally:
        server.stop()
    assert (server.data / (INDEX_FILE + ".corrupt")).exists(), "the damaged file is kept aside"

    server.start()
    try:
        assert _fully_indexed(server)["read"] == 0
        assert _listing(server) == before
    finally:
        server.stop()


def _watched_inodes(pid: int) -> set[int]:
    """The inodes this process's inotify instances watch (from /proc/PID/fdinfo)."""
    watched: set[int] = set()
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            text = info.read_text()
        except OSError:
            continue  # closed meanwhile
        for line in text.splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(f.split(":", 1) for f in line.split()[1:])
                watched.add(int(fields["ino"], 16))
    return watched


def test_one_watch_per_folder_and_a_new_folder_is_listed(tmp_path: Path) -> None:
    server = Server(tmp_path)
    write_archive(server.claude)
    server.start()
    try:
        _fully_indexed(server)
        assert server.proc is not None
        watched = _watched_inodes(server.proc.pid)
        folders = {server.claude.stat().st_ino} | {
            p.stat().st_ino for p in server.claude.iterdir() if p.is_dir()
        }
        files = {p.stat().st_ino for p in server.claude.rglob("*.jsonl")}
        assert folders <= watched, "every project folder is watched"
        assert not files & watched, "no session file has a watch of its own"
        assert len(watched) < len(folders) + 10  # plus the waits for a Codex dir to appear

        # A project folder created now, with a session in it, is listed.
        path = _session_file(server.claude, SESSIONS + 40)
        path.parent.mkdir()
        _new_session(server.claude, SESSIONS + 40)
        created = time.monotonic()
        wait_until(lambda: _cwd(SESSIONS + 40) in _listing(server), 10, "the new folder's session")
        listed_s = time.monotonic() - created
    finally:
        server.stop()
    record("archive: a new project folder is listed", {"listed_s": round(listed_s, 3)}, trials=1)
