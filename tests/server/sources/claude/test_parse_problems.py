"""A live Claude Code session with bad lines: each one is counted once, with the transcript's
path, the byte offset where the line starts and why, and the lines after it still arrive."""

from __future__ import annotations

from pathlib import Path

from sidemirror.core.models import UserEvent

from tests.harness.waiting import until

from .test_live import setup_project, started


async def test_bad_lines_are_reported_where_they_are(tmp_path: Path) -> None:
    path = setup_project(tmp_path)
    store, source, log = await started(tmp_path)
    try:
        before = len(log.items)
        at = path.stat().st_size
        bad = b'{"type": "user", "message": \n[1, 2]\n'
        good = (
            b'{"type":"user","message":{"role":"user","content":"after the bad lines"},'
            b'"uuid":"u-after","timestamp":"2026-01-01T00:00:00.000Z"}\n'
        )
        with path.open("ab") as fh:
            fh.write(bad + good)
        await until(lambda: len(log.items) > before)
        last = log.items[len(log.items) - 1]
        assert isinstance(last, UserEvent) and last.content == "after the bad lines"
        assert store.parse_errors == 2
        assert [(d["file"], d["offset"], d["reason"]) for d in store.parse_error_details] == [
            (str(path), at, "line is not JSON"),
            (str(path), at + bad.index(b"[1, 2]"), "line is not a JSON object"),
        ]
    finally:
        await source.stop()
