"""A transcript over 32 MB is read from a sync point near its end: same items, same ids.

The transcript is a real session (sample-project/fe5e1c67…) repeated with fresh ids until it
passes the size at which the server stops parsing whole files. What a user sees must not depend
on how the server loaded it: the newest items and their ids equal those of a parse from byte 0,
a client resumes by id across a restart, and growth continues from there.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.models import SessionItem
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store
from sidemirror.sources.claude import sync as claude_sync
from sidemirror.sources.claude.positions import last_seq_of_line
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.claude.sync import TAIL_FROM_BYTES, sync_points

from tests.harness.auth import AUTH
from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory, state_of
from tests.transcripts import positional_parse, rerun, write_long_session

FIX = FIXTURE_ROOT / "claude" / "sample-project"
SESSION = FIX / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SID = SESSION.stem


def write_big(projects: Path) -> Path:
    project = projects / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / SESSION.name
    write_long_session(path, SESSION, TAIL_FROM_BYTES + (2 << 20))
    return path


def whole_parse(path: Path) -> list[SessionItem]:
    return positional_parse(path.read_bytes())


def dump(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in ("id", "turn")}


async def snapshot(client: Any, **params: str) -> dict[str, Any]:
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]
    resp = await client.get(
        f"/workspace/{ws['id']}/session", params={"session": SID, **params}, headers=AUTH
    )
    assert resp.status == 200
    body: dict[str, Any] = await resp.json()
    return body


async def wait_listed(client: Any) -> None:
    for _ in range(200):
        resp = await client.get("/api/workspaces", headers=AUTH)
        if (await resp.json())["workspaces"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the transcript was never listed")


async def test_a_huge_transcript_reads_from_near_its_end_with_the_ids_of_a_whole_parse(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    path = write_big(projects)
    size = path.stat().st_size
    whole = whole_parse(path)
    client = await make_client(claude_dirs=[projects])
    await wait_listed(client)

    snap = await snapshot(client, limit="10000")
    skipped = snap["skipped_bytes"]
    assert skipped > 0 and size - skipped < 8 << 20, (skipped, size)  # the tail, not the file
    kept = [i for i in whole if i.seq > last_seq_of_line(skipped)]
    assert snap["total"] == len(kept) and len(kept) >= 200
    # The same items at the same positions as a parse from byte 0; turns are not numbered.
    expected = [json.loads(state_of(client).store.projector.to_json(i)) for i in kept]
    assert [dump(i) for i in snap["items"]] == [dump(i) for i in expected]
    assert all(i["id"] == f"{snap['epoch']}.{i['seq']}" for i in snap["items"])
    turns = [i for i in snap["items"] if i["type"] == "turn_complete"]
    assert turns and all(t["turn"] is None for t in turns)
    # The panel is told; the session keeps the title indexed from the file's head.
    sessions = await (
        await client.get(f"/workspace/{snap['workspace']}/sessions", headers=AUTH)
    ).json()
    assert sessions["sessions"][0]["title"] and sessions["sessions"][0]["items"] == len(kept)

    # A client that had the 100th-newest item resumes after it, exactly.
    held = snap["items"][-100]
    resp = await client.get(
        f"/workspace/{snap['workspace']}/session/stream",
        params={"session": SID},
        headers={**AUTH, "Last-Event-ID": held["id"]},
    )
    reader = SSEReader(resp)
    assert (await reader.event()).event == "hello"
    replayed = [(await reader.event()).id for _ in range(99)]
    assert replayed == [i["id"] for i in snap["items"][-99:]]
    # An id from before the part read is out of range: reset, then a snapshot that says so.
    resp.close()
    early = f"{snap['epoch']}.{whole[0].seq}"
    resp = await client.get(
        f"/workspace/{snap['workspace']}/session/stream",
        params={"session": SID, "limit": "5"},
        headers={**AUTH, "Last-Event-ID": early},
    )
    reader = SSEReader(resp)
    assert [(await reader.event()).event for _ in range(2)] == ["hello", "reset"]
    again = await reader.event()
    assert again.event == "snapshot" and again.data["skipped_bytes"] == skipped
    assert [i["id"] for i in again.data["items"]] == [i["id"] for i in snap["items"][-5:]]

    # Growth: one more run of the session, appended while a client follows; its items carry
    # the ids a parse from byte 0 of the grown file gives.
    more = rerun(SESSION.read_bytes(), 9999, SID)
    with open(path, "ab") as fh:
        fh.write(more)
    grown = [i for i in whole_parse(path) if i.seq > whole[-1].seq]
    live = [await reader.event() for _ in grown]
    assert [f.id for f in live] == [f"{snap['epoch']}.{i.seq}" for i in grown]
    resp.close()
    await client.close()

    # A restart replays the merge journal: same epoch, same ids, no full parse.
    client = await make_client(claude_dirs=[projects])
    await wait_listed(client)
    after = await snapshot(client, limit="10000")
    assert after["epoch"] == snap["epoch"] and after["skipped_bytes"] == skipped
    assert [i["id"] for i in after["items"]] == [i["id"] for i in snap["items"]] + [
        f.id for f in live
    ]
    await client.close()

    # Without the journal (a new data dir): a new epoch, but the same seqs for the same items.
    shutil.rmtree(tmp_path / "data")
    client = await make_client(claude_dirs=[projects])
    await wait_listed(client)
    fresh = await snapshot(client, limit="200")
    assert fresh["epoch"] != snap["epoch"]
    assert [i["seq"] for i in fresh["items"]] == [i.seq for i in (kept + grown)[-200:]]
    await client.close()


AGENTS = FIXTURE_ROOT / "claude" / "incremental-subagents"
AGENT_SID = "e9fb405b-169f-40eb-9396-7e75076f045d"


async def load_items(root: Path) -> tuple[list[dict[str, Any]], int]:
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [root / "projects"], root / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 10)
        (log,) = [s for ws in store.workspaces.values() for s in ws.sessions.values()]
        await store.load(log)
        items = [json.loads(w) for w in store.iter_wire(log, 0)]
        return items, log.skipped_bytes
    finally:
        await source.stop()


async def test_sub_agent_files_merge_the_same_from_a_sync_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session with a sub-agent file, read from the prompt of the turn that ran the
    sub-agent: its items (linked to their Task) and ids equal those of a whole parse."""
    project = tmp_path / "projects" / "-p"
    (project / AGENT_SID / "subagents").mkdir(parents=True)
    main = project / f"{AGENT_SID}.jsonl"
    write_long_session(main, SESSION, 2 << 20)  # earlier runs: prompts to start from
    earlier = main.stat().st_size
    with open(main, "ab") as fh:
        fh.write((AGENTS / "turn-2.jsonl").read_bytes())
    shutil.copyfile(
        AGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl",
        project / AGENT_SID / "subagents" / "agent-a485154.jsonl",
    )
    whole, skipped = await load_items(tmp_path)
    assert skipped == 0
    shutil.rmtree(tmp_path / "data")

    size = main.stat().st_size
    monkeypatch.setattr(claude_sync, "TAIL_FROM_BYTES", 1 << 20)
    # The window starts on the newline before turn-2 and the prompt must be at least as far
    # from the end as turn-2's start: the parse starts at turn-2's prompt and keeps what follows.
    monkeypatch.setattr(claude_sync, "TAIL_WINDOW_BYTES", size - earlier + 1)
    data = main.read_bytes()
    prompt = min(p.offset for p in sync_points(data) if p.offset > earlier)
    monkeypatch.setattr(claude_sync, "TAIL_KEEP_BYTES", size - prompt)
    tail, skipped = await load_items(tmp_path)
    first = data[prompt:]
    assert skipped == prompt + first.index(b"\n") + 1  # just past turn-2's prompt
    kept = [i for i in whole if i["seq"] > last_seq_of_line(skipped)]
    assert [dump(i) for i in tail] == [dump(i) for i in kept]
    linked = [i for i in tail if i.get("parent_tool_use_id")]
    assert len(linked) > 20  # the sub-agent's items are there, under their Task
    tasks = {i["tool_use_id"] for i in tail if i["type"] == "tool_use" and i["name"] == "Task"}
    assert {i["parent_tool_use_id"] for i in linked} <= tasks


@pytest.mark.parametrize("grew", ["while the server was down", "while the server tailed it"])
async def test_a_session_that_grew_huge_restarts_from_near_its_end_with_the_same_ids(
    make_client: ClientFactory, tmp_path: Path, grew: str
) -> None:
    """Read when small (whole, journal from byte 0), then grown past 32 MB: the restart skips
    ahead in its journal (or past its end) instead of replaying the whole file."""
    projects = tmp_path / "projects"
    project = projects / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / SESSION.name
    shutil.copyfile(SESSION, path)
    client = await make_client(claude_dirs=[projects])
    await wait_listed(client)
    small = await snapshot(client, limit="10000")
    assert small["skipped_bytes"] == 0
    if grew == "while the server was down":
        await client.close()

    grown = tmp_path / "grown.jsonl"
    write_long_session(grown, SESSION, TAIL_FROM_BYTES + (2 << 20))
    more = grown.read_bytes()[SESSION.stat().st_size :]
    with open(path, "ab") as fh:  # the same session, run on: its file only grows
        for start in range(0, len(more), 4 << 20):  # in pieces, journaled as they are read
            fh.write(more[start : start + (4 << 20)])
            fh.flush()
            await asyncio.sleep(0.2)
    if grew == "while the server tailed it":
        last = whole_parse(path)[-1].seq
        for _ in range(300):
            if (await snapshot(client, limit="1"))["cursor"] == f"{small['epoch']}.{last}":
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the server never read the whole growth")
        await client.close()
    client = await make_client(claude_dirs=[projects])
    await wait_listed(client)
    after = await snapshot(client, limit="10000")
    assert after["epoch"] == small["epoch"]  # resumable: the same log
    skipped = after["skipped_bytes"]
    assert SESSION.stat().st_size < skipped and path.stat().st_size - skipped < 8 << 20
    kept = [i for i in whole_parse(path) if i.seq > last_seq_of_line(skipped)]
    assert [i["seq"] for i in after["items"]] == [i.seq for i in kept]
    expected = [json.loads(state_of(client).store.projector.to_json(i)) for i in kept]
    assert [dump(i) for i in after["items"]] == [dump(i) for i in expected]
    await client.close()
