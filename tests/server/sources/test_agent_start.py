"""An agent started in a known workspace is seen within a scan or two, before it writes a line.

A real process: a `claude` and a `codex` executable (links to `sleep`, so argv[0] is the agent's
name, as for the real binaries) started with the workspace as its cwd, against a real
ClaudeSource tailing a real transcript rewritten to that directory.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store, workspace_id_for
from sidemirror.sources import proc_watch
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.proc_watch import SCAN_S, AgentScanner

from tests.harness.paths import FIXTURES
from tests.harness.waiting import until

TRANSCRIPT = FIXTURES / "claude" / "flat-agents" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
ROLLOUT = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
ROLLOUT_CWD = "/Users/Sample_User/naya"


def agent_binary(tmp_path: Path, name: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    link = bindir / name
    sleep = shutil.which("sleep")
    assert sleep is not None
    link.symlink_to(sleep)
    return link


async def test_an_agent_started_in_a_workspace_is_seen_before_it_writes(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    projects = tmp_path / "projects" / "-project"
    projects.mkdir(parents=True)
    text = TRANSCRIPT.read_text().replace("/tmp/private", str(workspace))
    main = projects / TRANSCRIPT.name
    main.write_text(text)
    size = main.stat().st_size
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
    await source.start()
    agents: list[subprocess.Popen[bytes]] = []
    try:
        await asyncio.wait_for(source.ready.wait(), 5)
        ws = store.workspace(workspace_id_for(str(workspace)))
        assert ws is not None and ws.pid is None
        for name in ("claude", "codex"):
            proc = subprocess.Popen([str(agent_binary(tmp_path, name)), "60"], cwd=workspace)
            agents.append(proc)
            pid = proc.pid
            # Within a scan or two (plus slack for a loaded machine), with no line written.
            await until(lambda: ws.pid == pid, timeout=3 * SCAN_S + 5)  # noqa: B023
            assert ws.active
            proc.terminate()
            proc.wait()
            await until(lambda: ws.pid is None, timeout=3 * SCAN_S + 5)
        assert main.stat().st_size == size  # nothing was written: seen by its process alone
    finally:
        for proc in agents:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        await source.stop()


class Agent:
    """One agent's source, alone, over a real folder its session file is written into."""

    def __init__(self, name: str, tmp_path: Path, store: Store) -> None:
        self.name = name
        self.workspace = tmp_path / "project"
        self.workspace.mkdir()
        self.source: ClaudeSource | CodexSource
        if name == "claude":
            self.folder = tmp_path / "projects" / "-project"
            self.fixture, cwd = TRANSCRIPT, "/tmp/private"
            self.source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
        else:
            self.folder = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
            self.fixture, cwd = ROLLOUT, ROLLOUT_CWD
            self.source = CodexSource(store, tmp_path / "codex", tmp_path / "data")
        self.folder.mkdir(parents=True)
        self.text = self.fixture.read_text().replace(cwd, str(self.workspace))

    def write_session(self) -> None:
        (self.folder / self.fixture.name).write_text(self.text)


@pytest.mark.parametrize("name", ["claude", "codex"])
async def test_a_new_session_shows_the_agent_running_in_its_workspace(
    tmp_path: Path, name: str
) -> None:
    """Both sources, each alone: the workspace of a session that appears while its agent runs
    is active with that agent's pid as soon as it is listed (Codex's took none)."""
    store = Store(Hub(), Projector())
    agent = Agent(name, tmp_path, store)
    proc = subprocess.Popen([str(agent_binary(tmp_path, name)), "60"], cwd=agent.workspace)
    await agent.source.start()
    try:
        await asyncio.wait_for(agent.source.ready.wait(), 5)
        agent.write_session()
        wid = workspace_id_for(str(agent.workspace))
        await until(lambda: store.workspace(wid) is not None, timeout=10)
        ws = store.workspaces[wid]
        assert ws.pid == proc.pid and ws.active
    finally:
        proc.kill()
        proc.wait()
        await agent.source.stop()


@pytest.mark.parametrize("name", ["claude", "codex"])
async def test_an_agent_started_is_seen_by_either_source_alone(tmp_path: Path, name: str) -> None:
    """Without a Claude source running beside it, a Codex-only server still sees an agent
    start in a workspace it lists, before the agent writes (Codex's never did)."""
    store = Store(Hub(), Projector())
    agent = Agent(name, tmp_path, store)
    agent.write_session()
    await agent.source.start()
    proc: subprocess.Popen[bytes] | None = None
    try:
        await asyncio.wait_for(agent.source.ready.wait(), 5)
        ws = store.workspace(workspace_id_for(str(agent.workspace)))
        assert ws is not None and ws.pid is None
        proc = subprocess.Popen([str(agent_binary(tmp_path, name)), "60"], cwd=agent.workspace)
        pid = proc.pid
        await until(lambda: ws.pid == pid, timeout=3 * SCAN_S + 5)
        assert ws.active
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        await agent.source.stop()


def test_a_scan_reads_only_processes_it_has_not_settled(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    real_cmdline = proc_watch._cmdline

    def counted(pid: int) -> list[str] | None:
        read.append(pid)
        return real_cmdline(pid)

    monkeypatch.setattr(proc_watch, "_cmdline", counted)
    pids = [os.getpid(), os.getppid()]
    scanner = AgentScanner(listing=lambda: list(pids))
    for _ in range(5):
        scanner.scan()
    # Each non-agent process's cmdline is read on its first few scans (it may not have exec'd
    # yet), then never again.
    assert sorted(read) == sorted(pids * 3)
