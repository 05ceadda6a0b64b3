"""While the server reads a large archive, the Session tab says how far it got.

Thousands of small real sessions (the head of a fixture transcript, each with its own id and
cwd): the panel connects while the server is still indexing and shows "Indexing N / M files"
instead of "No sessions yet"; once indexing is done the note goes away and the newest session's
workspace is the one shown.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.e2e.support import FIXTURES, SHOWN, session_list
from tests.harness.browser import Extension

SESSIONS = 12_000  # enough that indexing (newest first) is still running when the panel looks
SOURCE = FIXTURES / "claude/sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
HEAD_LINES = 4


def _write_archive(root: Path) -> str:
    """SESSIONS sessions over 40 folders, session i modified i seconds after session 0; the
    newest session's directory."""
    lines = SOURCE.read_bytes().splitlines(keepends=True)[:HEAD_LINES]
    head = b"".join(lines)
    sid = SOURCE.stem.encode()
    now = time.time()
    for i in range(SESSIONS):
        folder = root / f"-archive-{i % 40:02d}"
        folder.mkdir(exist_ok=True)
        name = f"{i:08d}-0000-4000-8000-000000000000"
        data = head.replace(sid, name.encode())
        data = re.sub(rb'"cwd":"[^"]*"', f'"cwd":"/home/heavy/project-{i:05d}"'.encode(), data)
        path = folder / f"{name}.jsonl"
        path.write_bytes(data)
        when = now - 86400 + i
        os.utime(path, (when, when))
    return f"/home/heavy/project-{SESSIONS - 1:05d}"


def test_the_panel_says_how_far_indexing_got(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    newest = _write_archive(archive)
    server = server_factory(claude=archive)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    note = panel.locator(".indexing-note")
    expect(note).to_have_text(re.compile(r"^Indexing [\d,]+ / 12,000 files$"))
    counted = note.text_content() or ""
    done = int(counted.split()[1].replace(",", ""))
    assert done < SESSIONS
    expect(panel.get_by_text("No sessions yet")).to_be_hidden()
    # Done: the note goes, and the newest session's workspace is listed and shown.
    expect(note).to_be_hidden(timeout=120_000)
    assert server.get("/health", auth=False)["indexing"]["done"] == SESSIONS
    expect(panel.locator(SHOWN)).to_contain_text(newest.rsplit("/", 1)[1])
    dialog = session_list(panel)
    expect(dialog.locator(".session-list-status")).to_have_text(
        f"{SESSIONS:,} sessions in {SESSIONS:,} workspaces"
    )
