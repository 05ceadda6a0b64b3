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

from sidemirror.models import SessionItem
from sidemirror.sources.claude_sync import TAIL_FROM_BYTES

from tests.transcripts import SLOTS, positional_parse, rerun, write_long_session

from .conftest import AUTH, ClientFactory, state_of
from .sse import SSEReader

FIX = Path(__file__).parent.parent / "fixtures" / "claude" / "sample-project"
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
    kept = [i for i in whole if i.seq > skipped * SLOTS]
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
