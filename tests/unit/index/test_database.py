"""The index file is opened in WAL mode and replaced, not trusted, when it is damaged."""

from __future__ import annotations

from pathlib import Path

from sidemirror.index.database import SCHEMA_VERSION, index_path, open_index


def test_a_new_index_is_created_in_wal_mode(tmp_path: Path) -> None:
    connection = open_index(tmp_path)
    (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    assert mode == "wal"
    assert version == SCHEMA_VERSION
    assert index_path(tmp_path).exists()


def test_a_corrupt_index_is_moved_aside_and_started_afresh(tmp_path: Path) -> None:
    index_path(tmp_path).write_bytes(b"this is not a database" * 100)
    connection = open_index(tmp_path)
    connection.execute("CREATE TABLE t (x)")
    assert (tmp_path / "index.sqlite3.corrupt").read_bytes().startswith(b"this is not")


def test_an_index_of_another_schema_version_is_rebuilt(tmp_path: Path) -> None:
    old = open_index(tmp_path)
    old.execute("CREATE TABLE stale (x)")
    old.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    old.close()
    connection = open_index(tmp_path)
    tables = connection.execute("SELECT name FROM sqlite_master WHERE name='stale'").fetchall()
    assert tables == []


def test_the_index_and_its_wal_are_private_whatever_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        connection = open_index(tmp_path)
        connection.execute("CREATE TABLE t (x)")
        connection.execute("INSERT INTO t VALUES (1)")
    finally:
        os.umask(old)
    files = [p for p in tmp_path.iterdir() if p.name.startswith("index.sqlite3")]
    assert {p.name for p in files} >= {"index.sqlite3", "index.sqlite3-wal"}
    assert all(p.stat().st_mode & 0o077 == 0 for p in files), [oct(p.stat().st_mode) for p in files]
