"""Special files named like transcripts are reported when they appear, on both backends, so the
sources can say why they skip them (a FIFO, a socket, a folder: sources/files/regular.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sidemirror.sources.files.watch import Backend, Change

from .test_watch import BACKENDS, watching


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_fifo_and_a_folder_named_like_a_transcript_are_reported(
    tmp_path: Path, backend: Backend
) -> None:
    project = tmp_path / "projects" / "proj"
    project.mkdir(parents=True)
    async with watching([tmp_path / "projects"], backend) as seen:
        fifo, folder = project / "pipe.jsonl", project / "folder.jsonl"
        os.mkfifo(fifo)
        folder.mkdir()
        await seen.wait(Change.added, fifo)
        await seen.wait(Change.added, folder)
        (folder / "notes.txt").write_text("x")  # inside it: watched as a folder, as before
        (folder / "inner.jsonl").write_text("{}\n")
        await seen.appear(folder / "inner.jsonl")
