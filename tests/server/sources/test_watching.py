"""Sources on the watcher: dirs created after start, both backends, a growing log's agent."""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store, workspace_id_for
from sidemirror.sources import procs
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.files import source as watched_source

from tests.harness.paths import FIXTURES
from tests.harness.waiting import until

BACKENDS = (["inotify"] if sys.platform.startswith("linux") else []) + ["watchfiles"]
CLAUDE = FIXTURES / "claude" / "incremental-subagents"
CLAUDE_SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
CLAUDE_CWD = "/Users/User/repo/codemie-ai/codemie-code"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
CODEX_SID = "019e1695-0522-7c83-8b39-0dd379793f80"
CODEX_CWD = "/Users/Sample_User/naya"


async def until_poked(
    cond: Callable[[], bool], poke: Callable[[], None], timeout: float = 10
) -> None:
    """Wait for `cond`; `poke` appends to the file meanwhile (every half second), as a live
    agent keeps doing (the watchfiles fallback can miss a file written right after its
    directory was created)."""
    tries = itertools.count(1)

    def seen() -> bool:
        if cond():
            return True
        if next(tries) % 10 == 0:
            poke()
        return False

    await until(seen, timeout, "the watcher to read the file")


def appender(path: Path, line: bytes) -> Callable[[], None]:
    def poke() -> None:
        with path.open("ab") as fh:
            fh.write(line)

    return poke


@pytest.fixture(params=BACKENDS)
def watch_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each watcher backend in turn, chosen the way a user does (SIDEMIRROR_WATCH)."""
    backend: str = request.param
    monkeypatch.setenv("SIDEMIRROR_WATCH", backend)
    return backend


async def test_claude_dir_created_after_start(tmp_path: Path, watch_backend: str) -> None:
    store = Store(Hub(), Projector())
    projects = tmp_path / "claude" / "projects"  # `claude` exists, `projects` not yet
    (tmp_path / "claude").mkdir()
    source = ClaudeSource(store, [projects], tmp_path / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 5)
        assert store.workspaces == {}
        folder = projects / "-Users-User-repo-codemie-ai-codemie-code"
        folder.mkdir(parents=True)
        main = folder / f"{CLAUDE_SID}.jsonl"
        shutil.copyfile(CLAUDE / "turn-1.jsonl", main)
        wid = workspace_id_for(CLAUDE_CWD)
        poke = appender(main, b"\n")
        await until_poked(lambda: store.workspace(wid) is not None, poke)
        log = store.workspaces[wid].sessions[CLAUDE_SID]
        await until_poked(lambda: len(log.items) > 0, poke)
        # It keeps following: the rest of the session arrives.
        before = len(log.items)
        with main.open("ab") as fh:
            fh.write((CLAUDE / "turn-2.jsonl").read_bytes()[main.stat().st_size :])
        await until_poked(lambda: len(log.items) > before, lambda: None)
    finally:
        await source.stop()


async def test_codex_sessions_dir_created_after_start(tmp_path: Path, watch_backend: str) -> None:
    store = Store(Hub(), Projector())
    codex = tmp_path / "codex"
    codex.mkdir()
    source = CodexSource(store, codex, tmp_path / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 5)
        day = codex / "sessions" / "2026" / "05" / "11"
        day.mkdir(parents=True)
        rollout = day / CODEX.name
        shutil.copyfile(CODEX, rollout)
        wid = workspace_id_for(CODEX_CWD)
        await until_poked(lambda: store.workspace(wid) is not None, appender(rollout, b"\n"))
        assert CODEX_SID in store.workspaces[wid].sessions
    finally:
        await source.stop()


async def test_a_growing_log_takes_its_agent_from_the_latest_scan_without_scanning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log that grows gives its workspace the agent the process scan found (proc_watch.py),
    and never lists /proc itself: that scan held the loop 5-20 ms beside a browser."""
    scans: list[int] = []

    def full_scan() -> dict[str, int]:
        scans.append(1)
        return {}

    async def no_scanner(*_args: object) -> None:  # the test says what the scan found
        await asyncio.Event().wait()

    monkeypatch.setattr(procs, "agent_pids", full_scan)
    monkeypatch.setattr(watched_source, "agent_pids", full_scan)
    monkeypatch.setattr(watched_source, "follow_agents", no_scanner)
    store = Store(Hub(), Projector())
    folder = tmp_path / "projects" / "-Users-User-repo-codemie-ai-codemie-code"
    folder.mkdir(parents=True)
    main = folder / f"{CLAUDE_SID}.jsonl"
    shutil.copyfile(CLAUDE / "turn-1.jsonl", main)
    source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 5)
        wid = workspace_id_for(CLAUDE_CWD)
        await until(lambda: store.workspace(wid) is not None, 10, "the session listed")
        ws = store.workspaces[wid]
        assert ws.pid is None
        scans.clear()
        store.agent_dirs = {ws.directory: os.getpid()}  # an agent runs there now
        with main.open("ab") as fh:
            fh.write((CLAUDE / "turn-2.jsonl").read_bytes()[main.stat().st_size :])
        await until(lambda: ws.pid == os.getpid(), 10, "the workspace given its agent")
        assert scans == []
    finally:
        await source.stop()
