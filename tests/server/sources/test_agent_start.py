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
from sidemirror.sources.proc_watch import SCAN_S, AgentScanner

from tests.harness.paths import FIXTURES
from tests.harness.waiting import until

TRANSCRIPT = FIXTURES / "claude" / "flat-agents" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"


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
