"""A transcript deleted (or moved away) while the server follows it: its session ends with the
reason "file removed" (said on the stream at once, and again to every client that connects
later), it is no longer active, and its workspace leaves the listing; the file put back is read
again. Real files in a real watched folder, through the HTTP API."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.harness.paths import FIXTURES
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory

FIX = FIXTURES / "claude" / "incremental-subagents"
SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))


async def _json(client: Any, path: str) -> Any:
    resp = await client.get(path, headers=AUTH)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def _workspaces(client: Any) -> list[dict[str, Any]]:
    return list((await _json(client, "/api/workspaces"))["workspaces"])


async def _until(check: Any, timeout: float = 10.0) -> Any:
    """Poll the API until `check()` returns something truthy (the server's state, not time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = await check()
        if got:
            return got
        assert loop.time() < deadline, "the server never reached the state"
        await asyncio.sleep(0.02)


async def _status_event(reader: SSEReader, timeout: float = 5.0) -> dict[str, Any]:
    async def next_status() -> dict[str, Any]:
        while True:
            frame = await reader.event()
            if frame.event == "session_status":
                return dict(frame.data)

    return await asyncio.wait_for(next_status(), timeout)


async def test_a_deleted_transcript_ends_its_session_and_a_restored_one_is_read_again(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    folder = projects / "-Users-User-repo-codemie-ai-codemie-code"
    folder.mkdir(parents=True)
    main = folder / f"{SID}.jsonl"
    shutil.copyfile(FIX / "turn-1.jsonl", main)
    client = await make_client(claude_dirs=[projects])
    (ws,) = await _until(lambda: _workspaces(client))
    snapshot = await _json(client, f"/workspace/{ws['id']}/session")
    assert snapshot["total"] > 0

    stream = await client.get(f"/workspace/{ws['id']}/session/stream", headers=AUTH)
    reader = SSEReader(stream)
    main.unlink()
    status = await _status_event(reader, timeout=1.0)  # within a second of the deletion
    assert status == {"type": "session_status", "state": "ended", "session": SID,
                      "reason": "file removed", "exact": False}  # fmt: skip
    stream.close()

    assert await _workspaces(client) == []  # no session left: the workspace is not listed
    (session,) = (await _json(client, f"/workspace/{ws['id']}/sessions"))["sessions"]
    assert (session["state"], session["reason"], session["active"]) == (
        "ended", "file removed", False,
    )  # fmt: skip
    # A panel opened (or reloaded) later is told too, after the items it still shows.
    later = await client.get(f"/workspace/{ws['id']}/session/stream", headers=AUTH)
    again = await _status_event(SSEReader(later))
    assert (again["state"], again["reason"]) == ("ended", "file removed")
    later.close()

    shutil.copyfile(FIX / "turn-2.jsonl", main)  # the file comes back (grown, as it happens)
    listed = await _until(lambda: _workspaces(client))
    assert [w["id"] for w in listed] == [ws["id"]]

    async def read_again() -> Any:
        (s,) = (await _json(client, f"/workspace/{ws['id']}/sessions"))["sessions"]
        snap = await _json(client, f"/workspace/{ws['id']}/session")
        return s["state"] != "ended" and s["reason"] is None and snap["total"] > snapshot["total"]

    await _until(read_again)  # all of turn-2 read: more items than turn-1 had


async def test_a_codex_rollout_moved_away_ends_its_session(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    rollout = day / CODEX.name
    shutil.copyfile(CODEX, rollout)
    client = await make_client(codex_dir=tmp_path / "codex")
    (ws,) = await _until(lambda: _workspaces(client))
    rollout.rename(tmp_path / CODEX.name)  # moved out of the watched folders

    async def ended() -> Any:
        (s,) = (await _json(client, f"/workspace/{ws['id']}/sessions"))["sessions"]
        return s["state"] == "ended" and s["reason"] == "file removed"

    await _until(ended)
    assert await _workspaces(client) == []
