"""Codex archives: rollouts in `archived_sessions/`, compressed to `.jsonl.zst`, are listed and read
like their plain twins; a sub-agent's thread names the session that spawned it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import zstandard
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.core.views import session_summary
from sidemirror.sources.codex.source import CodexSource

from tests.harness.waiting import until
from tests.server.sources.codex.test_source import CWD, FIXTURE, SESSION


async def started(codex: Path, data: Path) -> tuple[Store, CodexSource]:
    store = Store(Hub(), Projector())
    source = CodexSource(store, codex, data, watch_step_ms=10)
    await source.start()
    await asyncio.wait_for(source.ready.wait(), 5)
    return store, source


async def read(store: Store, session: str = SESSION) -> SessionLog:
    ws = store.workspace(workspace_id_for(CWD))
    assert ws is not None, "workspace not listed"
    log = ws.sessions[session]
    await store.load(log)
    return log


def rollout_in(home: Path) -> Path:
    """The recorded rollout, copied where Codex writes it under `home` (its day's folder)."""
    day = home / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    path = day / FIXTURE.name
    path.write_bytes(FIXTURE.read_bytes())
    return path


def shown(log: SessionLog) -> list[dict[str, object]]:
    return [i.model_dump(exclude={"id"}) for i in log.items]


def compress(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=19).compress(data)


async def test_a_compressed_archived_rollout_reads_like_its_plain_twin(tmp_path: Path) -> None:
    plain_home = tmp_path / "plain"
    rollout_in(plain_home)
    archived_home = tmp_path / "archived"
    (archived_home / "archived_sessions").mkdir(parents=True)
    zst = archived_home / "archived_sessions" / f"{FIXTURE.name}.zst"
    zst.write_bytes(compress(FIXTURE.read_bytes()))
    assert zst.stat().st_size < FIXTURE.stat().st_size // 3

    store, source = await started(plain_home, tmp_path / "d1")
    try:
        plain = await read(store)
    finally:
        await source.stop()
    store, source = await started(archived_home, tmp_path / "d2")
    try:
        ws = store.workspace(workspace_id_for(CWD))
        assert ws is not None and list(ws.sessions) == [SESSION]  # listed by its head alone
        archived = ws.sessions[SESSION]
        assert archived.title == plain.title and archived.title
        await store.load(archived)
        assert len(archived.items) > 40
        assert shown(archived) == shown(plain)
    finally:
        await source.stop()


async def test_a_rollout_compressed_while_watched_stays_one_session(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    plain = rollout_in(home)
    store, source = await started(home, tmp_path / "data")
    try:
        log = await read(store)
        before = shown(log)
        # Codex archives it: a compressed copy in archived_sessions/, the plain file removed.
        (home / "archived_sessions").mkdir()
        zst = home / "archived_sessions" / f"{FIXTURE.name}.zst"
        zst.write_bytes(compress(FIXTURE.read_bytes()))
        plain.unlink()
        await until(lambda: zst in source._twins)  # seen, and known for the same session
        ws = store.workspace(workspace_id_for(CWD))
        assert ws is not None and list(ws.sessions) == [SESSION]
        assert shown(ws.sessions[SESSION]) == before
    finally:
        await source.stop()


async def test_a_broken_archive_is_reported_not_fatal(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    (home / "archived_sessions").mkdir(parents=True)
    good = compress(FIXTURE.read_bytes())
    broken = home / "archived_sessions" / f"{FIXTURE.name}.zst"
    broken.write_bytes(good[: len(good) // 2])  # cut short: its head still decompresses
    store, source = await started(home, tmp_path / "data")
    try:
        log = await read(store)
        assert log.items  # what was readable is shown
        [problem] = [p for p in store.parse_error_details if p["file"] == str(broken)]
        assert "cut short" in problem["reason"]
    finally:
        await source.stop()


async def test_a_sub_agent_thread_is_listed_under_its_parent(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    day = rollout_in(home).parent
    lines = FIXTURE.read_text().splitlines()
    meta = json.loads(lines[0])
    child_id = "019e16a0-0000-7000-8000-000000000042"
    child_meta = json.loads(lines[0])
    child_meta["payload"]["id"] = child_id
    spawn = {"parent_thread_id": SESSION, "depth": 1, "agent_nickname": "Hypatia"}
    child_meta["payload"]["source"] = {"subagent": {"thread_spawn": spawn}}
    ts = json.loads(lines[-1])["timestamp"]
    own = [
        {"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt-5.2"}},
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "Review the diff", "kind": "plain"},
        },
    ]
    # A forked child: its meta, its parent's meta and history, then its own work.
    child = [json.dumps(child_meta), json.dumps(meta), *lines[1:], *map(json.dumps, own)]
    store, source = await started(home, tmp_path / "data")
    try:
        ws = store.workspace(workspace_id_for(CWD))
        assert ws is not None and ws.latest_session_id == SESSION
        (day / f"rollout-2026-05-11T13-40-00-{child_id}.jsonl").write_text("\n".join(child) + "\n")
        await until(lambda: child_id in ws.sessions)
        sub = ws.sessions[child_id]
        summary = session_summary(sub)
        assert summary["parent_id"] == SESSION
        assert sub.title == "Hypatia: Review the diff"
        assert "parent_id" not in session_summary(ws.sessions[SESSION])
        await until(lambda: len(sub.items) > 0)  # read, and touched as it was
        assert [i.type for i in sub.items] == ["user"]  # not the parent's copied history
        # The newer sub-agent thread does not take the panel away from the thread it serves.
        assert ws.latest_session_id == SESSION
    finally:
        await source.stop()
