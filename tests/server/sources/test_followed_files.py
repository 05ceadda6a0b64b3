"""A followed session's file gets a watch of its own; the others are read in the folders'
watch's rounds (sources/files/close_watch.py). Whichever way a line comes, it is read once, in
order: while a session is followed, when a client starts following it, and after it stops."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub, session_topic, workspace_topic
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.index.search_feed import searchable_text
from sidemirror.sources.claude.source import ClaudeSource

from tests.harness.agent_lines import LineFactory, seed_session
from tests.harness.waiting import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify only")

CWD_A, CWD_B = "/home/dev/agent-a", "/home/dev/agent-b"
SID_A, SID_B = "5e551000-0000-4000-8000-00000000000a", "5e551000-0000-4000-8000-00000000000b"


class Agent:
    """A live transcript: `write(n)` appends line n (carrying marker n) as an agent would."""

    def __init__(self, projects: Path, cwd: str, sid: str) -> None:
        self.path = projects / cwd.replace("/", "-") / f"{sid}.jsonl"
        self.cwd, self.sid = cwd, sid
        seed_session(self.path, sid, cwd)
        self.lines = LineFactory(sid, cwd)

    def write(self, n: int) -> None:
        with self.path.open("ab") as fh:
            fh.write(self.lines.line(n))

    def log(self, store: Store) -> SessionLog:
        return store.workspaces[workspace_id_for(self.cwd)].sessions[self.sid]


def markers(log: SessionLog) -> list[int]:
    """The markers the session's items carry, in the order they were read."""
    found = []
    for i in range(len(log.items)):
        text = searchable_text(log.items[i])
        if text.startswith("BMK"):
            found.append(int(text[3:10]))
    return found


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[Store, ClaudeSource, Agent, Agent]]:
    projects = tmp_path / "projects"
    a, b = Agent(projects, CWD_A, SID_A), Agent(projects, CWD_B, SID_B)
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [projects], tmp_path / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 30)
        for agent in (a, b):
            await store.load(agent.log(store))
        yield store, source, a, b
    finally:
        await source.stop()


async def test_followed_files_are_watched_closely_and_no_line_is_lost(
    running: tuple[Store, ClaudeSource, Agent, Agent],
) -> None:
    store, source, a, b = running
    log_a, log_b = a.log(store), b.log(store)
    close = source._close
    assert close is not None
    sub = store.hub.subscribe(session_topic(log_a.workspace_id, SID_A))
    assert a.path in close  # from the moment a client follows it, not from its next round
    for n in range(5):
        a.write(n)
        b.write(100 + n)
    await until(lambda: markers(log_a) == [0, 1, 2, 3, 4], 20, "A's lines")
    await until(lambda: markers(log_b) == [100, 101, 102, 103, 104], 20, "B's lines")
    assert a.path in close and b.path not in close

    # A's stream goes: its next write is read (through its own watch) and hands it back.
    store.hub.unsubscribe(sub)
    a.write(5)
    await until(lambda: markers(log_a)[-1:] == [5], 20, "A's line after its stream went")
    assert a.path not in close
    a.write(6)  # now the folders' watch's
    await until(lambda: markers(log_a)[-1:] == [6], 20, "A's next line")

    # B's workspace is followed (a panel on Auto): B, its latest session, is close at once.
    store.hub.subscribe(workspace_topic(log_b.workspace_id))
    assert b.path in close
    for n in range(105, 110):
        b.write(n)
    await until(lambda: markers(log_b)[-1:] == [109], 20, "B's lines once followed")
    assert markers(log_a) == list(range(7))
    assert markers(log_b) == list(range(100, 110))
