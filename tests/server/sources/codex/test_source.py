"""The Codex source: rollouts indexed lazily, followed live, ids stable across restarts."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.sources.codex.source import CodexSource

from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.harness.waiting import until

FIXTURE = next((FIXTURE_ROOT / "codex").glob("rollout-*.jsonl"))
SESSION = "019e1695-0522-7c83-8b39-0dd379793f80"
CWD = "/Users/Sample_User/naya"


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-05-11T12:00:00.000Z", "type": kind, "payload": payload})


async def start(codex: Path, data: Path) -> tuple[Store, CodexSource, SessionLog]:
    store = Store(Hub(), Projector())
    source = CodexSource(store, codex, data, watch_step_ms=10)
    await source.start()
    await asyncio.wait_for(source.ready.wait(), 5)
    ws = store.workspace(workspace_id_for(CWD))
    assert ws is not None
    return store, source, ws.sessions[SESSION]


async def test_rollouts_load_lazily_follow_live_and_keep_ids(tmp_path: Path) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    rollout = day / FIXTURE.name
    shutil.copyfile(FIXTURE, rollout)
    store, source, log = await start(tmp_path / "codex", tmp_path / "data")
    try:
        assert len(log.items) == 0 and log.loader is not None  # indexed, not parsed
        assert log.title is not None and "analyze trascript" in log.title
        await store.load(log)
        types = [i.type for i in log.items]
        assert types.count("tool_use") == 38 and types.count("user") == 3
        first_ids = [i.id for i in log.items]
        with rollout.open("a") as fh:
            fh.write(_line("event_msg", {"type": "task_complete"}) + "\n")
        await until(lambda: log.items[-1].type == "turn_complete" and len(log.items) > 46)
        assert log.items[-1].turn == 3
        ids = [i.id for i in log.items]
    finally:
        await source.stop()

    # A restart parses the same bytes into the same ids under the same epoch.
    store2, source2, log2 = await start(tmp_path / "codex", tmp_path / "data")
    try:
        await store2.load(log2)
        assert [i.id for i in log2.items] == ids and ids[: len(first_ids)] == first_ids
        # Truncated and rewritten: no longer append-only, so a new epoch and a reset.
        rollout.write_text(FIXTURE.read_text().splitlines()[0] + "\n")
        await until(lambda: log2.epoch != ids[0].split(".")[0])
        await until(lambda: not log2.items or log2.items[0].id.startswith(log2.epoch))
    finally:
        await source2.stop()
