"""A write that shows nothing, to a session that shows nothing yet, is not activity: the panel
following a workspace stays on the session that is talking. The same for both file sources
(Codex's used to count every write, and took the panel to an empty session).

Real files in a real watched folder: an agent's session with items and a second one holding
only bookkeeping lines (a Claude `progress` record, a Codex `session_meta`), which is then
written to again with another line that shows nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store, workspace_id_for
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.codex.source import CodexSource

from tests.harness.paths import FIXTURES
from tests.harness.waiting import until

CLAUDE = FIXTURES / "claude" / "incremental-subagents" / "turn-1.jsonl"
CLAUDE_SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
CLAUDE_CWD = "/Users/User/repo/codemie-ai/codemie-code"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
CODEX_SID = "019e1695-0522-7c83-8b39-0dd379793f80"
CODEX_CWD = "/Users/Sample_User/naya"
QUIET_SID = "019e16a0-0000-7000-8000-00000000beef"
AT = "2026-05-11T10:29:40.150Z"


def claude(tmp_path: Path, store: Store) -> tuple[ClaudeSource, str, Path, str]:
    folder = tmp_path / "projects" / "-repo"
    folder.mkdir(parents=True)
    shutil.copyfile(CLAUDE, folder / f"{CLAUDE_SID}.jsonl")
    quiet = folder / f"{QUIET_SID}.jsonl"
    record = {"type": "progress", "cwd": CLAUDE_CWD, "sessionId": QUIET_SID, "timestamp": AT}
    quiet.write_text(json.dumps(record) + "\n")
    source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
    return source, CLAUDE_SID, quiet, json.dumps({**record, "uuid": "u2"}) + "\n"


def codex(tmp_path: Path, store: Store) -> tuple[CodexSource, str, Path, str]:
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    shutil.copyfile(CODEX, day / CODEX.name)
    meta = json.loads(CODEX.read_text().splitlines()[0])
    meta["payload"]["id"] = QUIET_SID
    quiet = day / f"rollout-2026-05-11T13-40-00-{QUIET_SID}.jsonl"
    quiet.write_text(json.dumps(meta) + "\n")
    source = CodexSource(store, tmp_path / "codex", tmp_path / "data")
    context = {"timestamp": AT, "type": "turn_context", "payload": {"model": "gpt-5.2"}}
    return source, CODEX_SID, quiet, json.dumps(context) + "\n"


@pytest.mark.parametrize(("make", "cwd"), [(claude, CLAUDE_CWD), (codex, CODEX_CWD)])
async def test_a_write_that_shows_nothing_keeps_the_panel_on_the_talking_session(
    tmp_path: Path,
    make: Callable[[Path, Store], tuple[ClaudeSource | CodexSource, str, Path, str]],
    cwd: str,
) -> None:
    store = Store(Hub(), Projector())
    source, talking, quiet, nothing = make(tmp_path, store)
    now = time.time()
    os.utime(quiet, (now - 100, now - 100))  # the quiet session is the older one
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 10)
        ws = store.workspaces[workspace_id_for(cwd)]
        assert set(ws.sessions) == {talking, QUIET_SID}
        assert ws.latest_session_id == talking
        log = ws.sessions[QUIET_SID]
        listed_epoch = log.epoch
        with quiet.open("a") as fh:
            fh.write(nothing)
        # The change was read (a first read gives the session its epoch): nothing to show.
        await until(lambda: log.epoch != listed_epoch)
        assert not log.items
        assert ws.latest_session_id == talking
    finally:
        await source.stop()
