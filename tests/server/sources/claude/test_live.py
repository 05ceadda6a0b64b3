"""ClaudeSource live: a real transcript appended in irregular chunks reaches a subscriber once."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from sidemirror.core.hub import (
    Hub,
    ItemsPublished,
    LogReset,
    Message,
    SessionSwitched,
    session_topic,
    weight,
    workspace_topic,
)
from sidemirror.core.models import SessionItem
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.sources.claude.demo import DEMO_DIRECTORY, DEMO_NAME, DEMO_SESSION_ID, DemoSource
from sidemirror.sources.claude.source import ClaudeSource

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

from .running import started as started_on

FIX = FIXTURE_ROOT / "claude" / "incremental-subagents"
SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
CWD = "/Users/User/repo/codemie-ai/codemie-code"


def setup_project(root: Path, turn: str = "turn-1") -> Path:
    """`turn` (turn-1: a live session) at `<projects>/<folder>/<sid>.jsonl`, with its sub-agent
    file in `<sid>/subagents/`."""
    project = root / "projects" / "-Users-User-repo-codemie-ai-codemie-code"
    (project / SID / "subagents").mkdir(parents=True)
    shutil.copyfile(FIX / f"{turn}.jsonl", project / f"{SID}.jsonl")
    shutil.copyfile(
        FIX / turn / "subagents" / "agent-a485154.jsonl",
        project / SID / "subagents" / "agent-a485154.jsonl",
    )
    return project / f"{SID}.jsonl"


async def started(tmp_path: Path) -> tuple[Store, ClaudeSource, SessionLog]:
    """The source on this module's session (`setup_project`), loaded; the caller stops it."""
    store, source, log = await started_on(tmp_path, CWD, SID)
    ws = store.workspace(workspace_id_for(CWD))
    assert ws is not None and ws.directory == CWD and ws.branch == "hooks"
    return store, source, log


async def drain(queue: asyncio.Queue[Message], want: int, timeout: float = 10.0) -> list[Message]:
    """Messages until they hold `want` items (a batch counts each of its items)."""
    got: list[Message] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while sum(map(weight, got)) < want:
        got.append(await asyncio.wait_for(queue.get(), max(0.01, deadline - loop.time())))
    return got


def published_items(messages: list[Message]) -> list[SessionItem]:
    return [i for m in messages if isinstance(m, ItemsPublished) for i in m.items]


def content(log: SessionLog) -> list[dict[str, object]]:
    return [i.model_dump(exclude={"id", "seq"}) for i in log.items]


async def test_appended_chunks_arrive_once_in_order(tmp_path: Path) -> None:
    main = setup_project(tmp_path)
    store, source, log = await started(tmp_path)
    try:
        initial = len(log.items)
        assert initial > 0 and log.title
        # What the whole of turn-2 gives, parsed from scratch in another tree.
        ref_root = tmp_path / "ref"
        ref_main = setup_project(ref_root)
        shutil.copyfile(FIX / "turn-2.jsonl", ref_main)
        ref_store, ref_source, ref_log = await started(ref_root)
        await ref_source.stop()
        expected = content(ref_log)[initial:]
        assert content(ref_log)[:initial] == content(log)
        assert expected, "turn-2 adds items"

        sub = store.hub.subscribe(session_topic(log.workspace_id, SID))
        rest = (FIX / "turn-2.jsonl").read_bytes()[main.stat().st_size :]
        first_nl = rest.index(b"\n")
        cuts = [first_nl // 2, first_nl + 1 - first_nl // 2, 7, 5000, 1, 40000, 333]
        pos = 0
        with open(main, "ab") as fh:
            for cut in cuts + [len(rest)]:
                fh.write(rest[pos : pos + cut])
                fh.flush()
                pos += cut
                await asyncio.sleep(0.03)
                if pos >= len(rest):
                    break
        messages = await drain(sub.queue, len(expected))
        published = published_items(messages)
        assert len(published) == len(expected)
        assert [i.model_dump(exclude={"id", "seq"}) for i in published] == expected
        # The ids the parse from scratch gives (positions in the file), in order.
        assert [i.seq for i in published] == [i.seq for i in list(ref_log.items)[initial:]]
        assert [i.seq for i in published] == sorted({i.seq for i in published})
        assert published[0].seq > log.items.seq_at(initial - 1)
        assert all(i.id == f"{log.epoch}.{i.seq}" for i in published)
        await asyncio.sleep(0.3)
        assert not published_items(drain_now(sub.queue))
        # One turn_complete, at end_turn; the agent's own duration for it comes after, naming
        # it by the seq it was published with.
        turns = [i for i in log.items if i.type == "turn_complete"]
        last = log.items[-1]
        assert len(turns) == 1 and last.type == "turn_duration"
        assert last.turn_seq == turns[0].seq and last.duration_ms == 529891
    finally:
        await source.stop()


def drain_now(queue: asyncio.Queue[Message]) -> list[Message]:
    out: list[Message] = []
    while not queue.empty():
        out.append(queue.get_nowait())
    return out


async def test_restart_keeps_ids_and_truncation_gets_a_new_epoch(tmp_path: Path) -> None:
    main = setup_project(tmp_path)
    store, source, log = await started(tmp_path)
    with open(main, "ab") as fh:  # grow live so the merge journal has live entries too
        fh.write((FIX / "turn-2.jsonl").read_bytes()[main.stat().st_size :])
    for _ in range(200):
        if log.items and log.items[-1].type == "turn_complete":
            break
        await asyncio.sleep(0.02)
    await source.stop()
    before = [(i.id, i.model_dump(exclude={"id"})) for i in log.items]

    store2, source2, log2 = await started(tmp_path)
    try:
        assert log2.epoch == log.epoch
        assert [(i.id, i.model_dump(exclude={"id"})) for i in log2.items] == before

        sub = store2.hub.subscribe(session_topic(log2.workspace_id, SID))
        shutil.copyfile(FIX / "turn-1.jsonl", tmp_path / "t1")
        os.truncate(main, 0)  # no longer append-only
        with open(main, "ab") as fh:
            fh.write((tmp_path / "t1").read_bytes())
        for _ in range(200):
            if log2.epoch != log.epoch and len(log2.items) > 0:
                break
            await asyncio.sleep(0.02)
        assert log2.epoch != log.epoch
        await asyncio.sleep(0.2)
        messages = drain_now(sub.queue)
        assert any(isinstance(m, LogReset) and m.epoch == log2.epoch for m in messages)
        assert all(i.id.startswith(log2.epoch + ".") for i in log2.items)
    finally:
        await source2.stop()


async def test_new_session_file_switches_the_workspace(tmp_path: Path) -> None:
    main = setup_project(tmp_path)
    store, source, log = await started(tmp_path)
    try:
        sub = store.hub.subscribe(workspace_topic(log.workspace_id))
        new_sid = "0f0f0f0f-0000-4000-8000-000000000001"
        shutil.copyfile(
            FIX.parent / "flat-agents" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
            tmp_path / "flat.jsonl",
        )
        text = (tmp_path / "flat.jsonl").read_text().replace("/tmp/private", CWD)
        (main.parent / f"{new_sid}.jsonl").write_text(text)
        messages = await drain(sub.queue, 1)
        assert isinstance(messages[0], SessionSwitched) and messages[0].session_id == new_sid
        ws = store.workspace(log.workspace_id)
        assert ws is not None and ws.latest_session_id == new_sid
    finally:
        await source.stop()


async def test_demo_replays_the_bundled_session_through_the_tailer(tmp_path: Path) -> None:
    store = Store(Hub(), Projector())
    demo = DemoSource(store, tmp_path / "data", pace_s=0.002, loops=1)
    await demo.start()
    try:
        await asyncio.wait_for(demo.done.wait(), 20)
        ws = store.workspace(workspace_id_for(DEMO_DIRECTORY))
        assert ws is not None and ws.name == DEMO_NAME == "Demo"  # short enough to show whole
        log = ws.latest_session()
        assert log is not None and log.title == "Demo"  # not its first prompt
        await store.load(log)
        for _ in range(200):
            if log.items and log.items[-1].type == "turn_complete":
                break
            await asyncio.sleep(0.02)
        types = [i.type for i in log.items]
        assert types[0] == "user" and types[-1] == "turn_complete"
        assert {"tool_use", "tool_result", "plan", "assistant"} <= set(types)
        assert any(i.parent_tool_use_id for i in log.items)
    finally:
        await demo.stop()
    assert not (tmp_path / "data" / "demo").exists()


async def test_the_demo_replays_as_one_session_that_starts_over(tmp_path: Path) -> None:
    """Each pass empties the same file and writes it again: one "Demo" session, reset per pass
    (never a new session a minute)."""
    store = Store(Hub(), Projector())
    resets: list[LogReset] = []
    store.taps.append(lambda _log, m: resets.append(m) if isinstance(m, LogReset) else None)
    demo = DemoSource(store, tmp_path / "data", pace_s=0.005, loops=3)
    await demo.start()
    try:
        await asyncio.wait_for(demo.done.wait(), 30)
        ws = store.workspace(workspace_id_for(DEMO_DIRECTORY))
        assert ws is not None and list(ws.sessions) == [DEMO_SESSION_ID]
        assert len(resets) >= 2  # passes 2 and 3 each started it over
        log = ws.sessions[DEMO_SESSION_ID]
        await store.load(log)
        for _ in range(200):
            if log.items and log.items[-1].type == "turn_complete":
                break
            await asyncio.sleep(0.02)
        # Only the last pass is held: one turn, not three.
        assert [i.type for i in log.items].count("turn_complete") == 1
    finally:
        await demo.stop()
