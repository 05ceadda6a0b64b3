"""A restart while the file index is still being read: a session opened before its sub-agent
files were attached must still show them, under the ids it had before the restart.

The startup index registers main transcripts first and attaches sub-agent files after; a client
(an SSE stream resuming after a crash) can open the session in between. Real files, a real
ClaudeSource, a real merge journal and file index in the data dir.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.sources.claude.source import ClaudeSource

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

from .running import session_loaded
from .test_live import CWD, SID, setup_project

INCREMENTAL = FIXTURE_ROOT / "claude" / "incremental-subagents"


def nested_layout(root: Path) -> None:
    """turn-2 whole: `<project>/<sid>.jsonl` and `<project>/<sid>/subagents/agent-*.jsonl`."""
    setup_project(root, "turn-2")


def flat_layout(root: Path) -> None:
    """The same files in the older layout: `<project>/agent-*.jsonl` beside the session (which
    one it belongs to is said only inside it)."""
    project = root / "projects" / "-Users-User-repo-codemie-ai-codemie-code"
    project.mkdir(parents=True)
    shutil.copyfile(INCREMENTAL / "turn-2.jsonl", project / f"{SID}.jsonl")
    agent = "agent-a485154.jsonl"
    shutil.copyfile(INCREMENTAL / "turn-2" / "subagents" / agent, project / agent)


def snapshot(log: SessionLog) -> list[tuple[str, str]]:
    return [(item.id, item.model_dump_json(exclude={"id"})) for item in log.items]


async def first_run(tmp_path: Path, cwd: str, sid: str) -> tuple[str, list[tuple[str, str]]]:
    """Start, read the session whole (this writes its merge journal), stop."""
    async with session_loaded(tmp_path, cwd, sid) as (_, log):
        assert any(item.parent_tool_use_id for item in log.items), "the sub-agent's items show"
        return log.epoch, snapshot(log)


async def open_as_soon_as_listed(tmp_path: Path, cwd: str, sid: str) -> SessionLog:
    """Restart, and load the session the moment the index registers it: before the index
    has reached the sub-agent files. Returns the log once the index is done."""
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
    await source.start()
    try:
        ws_id = workspace_id_for(cwd)
        while (ws := store.workspace(ws_id)) is None or sid not in ws.sessions:
            assert not source.ready.is_set(), "indexed before the session could be opened"
            await asyncio.sleep(0)
        log = ws.sessions[sid]
        opened_early = not source.ready.is_set()
        await store.load(log)
        await asyncio.wait_for(source.ready.wait(), 10)
        assert opened_early
        return log
    finally:
        await source.stop()


@pytest.mark.parametrize("layout", [nested_layout, flat_layout], ids=["subagents", "flat"])
async def test_a_session_opened_mid_index_keeps_its_subagent_items_and_ids(
    tmp_path: Path, layout: Callable[[Path], None]
) -> None:
    """Newer-layout files are attached before any session is listed; a session beside
    older-layout files (which only reading tells whose they are) is read once they are."""
    layout(tmp_path)
    epoch, before = await first_run(tmp_path, CWD, SID)
    log = await open_as_soon_as_listed(tmp_path, CWD, SID)
    assert log.epoch == epoch, "the restart rebuilt the session under a new epoch"
    assert snapshot(log) == before


async def test_a_session_that_grows_before_the_index_lists_it_is_read_with_its_subagents(
    tmp_path: Path,
) -> None:
    """After a restart the watches are in place before the startup index lists the files, so
    the transcript's next write can register the session and read it first: it must be read
    with its sub-agent file (which did not change), under the ids its journal recorded."""
    nested_layout(tmp_path)
    epoch, before = await first_run(tmp_path, CWD, SID)
    projects = tmp_path / "projects"
    main = projects / "-Users-User-repo-codemie-ai-codemie-code" / f"{SID}.jsonl"
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [projects], tmp_path / "data")
    source.dirs = [projects.resolve()]  # as `start` resolves them; no index runs
    try:
        await source._changed(main.resolve())  # what the watcher calls when the file grows
        ws = store.workspace(workspace_id_for(CWD))
        assert ws is not None
        log = ws.sessions[SID]
        assert log.epoch == epoch, "the session was rebuilt under a new epoch"
        assert snapshot(log) == before
    finally:
        await source.stop()
