"""The ingest journal under faults: a line stored whole or not at all, nothing published before it
is stored, ids never reused within an epoch, and sessions indexed lazily across restarts."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sidemirror.core.store import workspace_id_for
from sidemirror.ingest import journal as journal_module

from tests.harness.auth import AUTH, NDJSON
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory, ingest, state_of

WORKSPACE = "/home/dev/project"
WS_ID = workspace_id_for(WORKSPACE)


def _lines(*contents: str, session: str | None = None) -> str:
    extra = {"session": session} if session else {}
    return "".join(
        json.dumps({"type": "assistant", "content": c, **extra}) + "\n" for c in contents
    )


async def _post(client: TestClient[Any, Any], body: str) -> tuple[int, Any]:
    resp = await client.post(
        "/api/ingest", params={"workspace": WORKSPACE, "session": "s1"}, data=body, headers=NDJSON
    )
    return resp.status, await resp.json()


async def _snapshot(client: TestClient[Any, Any], session: str = "s1") -> dict[str, Any]:
    resp = await client.get(f"/workspace/{WS_ID}/session", params={"session": session},
                            headers=AUTH)  # fmt: skip
    assert resp.status == 200, await resp.text()
    body: dict[str, Any] = await resp.json()
    return body


def _journal_file(tmp_path: Path) -> Path:
    return next((tmp_path / "data" / "ingest").glob("*/*.jsonl"))


async def _journal_of_one_line(make_client: ClientFactory, tmp_path: Path) -> Path:
    """A server that took one line ("a") and stopped: its journal, for a test to damage before
    the next start."""
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "a"}])
    await client.close()
    return _journal_file(tmp_path)


def _disk_full_after(monkeypatch: pytest.MonkeyPatch, lines: int, extra: int = 5) -> None:
    """Writes take `lines` more whole lines and `extra` bytes of the next, then the disk is
    full (a short write, then ENOSPC)."""
    real = os.write
    left = [lines, extra]

    def write(fd: int, data: Any) -> int:
        data = bytes(data)
        end = 0
        while left[0] > 0 and (nl := data.find(b"\n", end)) >= 0:
            end, left[0] = nl + 1, left[0] - 1
        if left[0] == 0:
            end, left[1] = min(len(data), end + left[1]), 0
        else:
            end = len(data)
        if end == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data[:end])

    monkeypatch.setattr(os, "write", write)


async def test_lines_after_the_one_the_disk_refused_are_not_applied(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "before"}])
    _disk_full_after(monkeypatch, 2)  # two lines whole, the third torn
    status, body = await _post(client, _lines("a", "b", "c", "d"))
    monkeypatch.undo()
    assert status == 507, body
    assert body["error"]["code"] == "disk_full"
    assert str(tmp_path / "data") in body["error"]["message"]
    assert (body["accepted"], body["first_unstored_line"]) == (2, 2)
    assert [i["content"] for i in (await _snapshot(client))["items"]] == ["before", "a", "b"]
    assert (
        _journal_file(tmp_path)
        .read_bytes()
        .endswith(b'"b","truncated":false,"full_length":0,"segment_id":null}\n')
    )


async def test_a_line_for_two_sessions_is_stored_in_both_or_neither(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "one"}], session="s1")
    await ingest(client, [{"type": "assistant", "content": "two"}], session="s2")
    body = (
        _lines("s1-a", session="s1") + _lines("s2-a", session="s2") + _lines("s1-b", session="s1")
    )
    # s1's write (both of its lines) gets one line and a fragment in; s2's gets nothing.
    _disk_full_after(monkeypatch, 1)
    status, answer = await _post(client, body)
    monkeypatch.undo()
    assert status == 507 and answer["first_unstored_line"] == 1, answer
    assert [i["content"] for i in (await _snapshot(client, "s1"))["items"]] == ["one", "s1-a"]
    assert [i["content"] for i in (await _snapshot(client, "s2"))["items"]] == ["two"]


async def test_a_failed_fsync_starts_the_session_over_under_a_new_epoch(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": f"a{i}"} for i in range(3)])
    old = (await _snapshot(client))["epoch"]
    stream = await client.get(f"/workspace/{WS_ID}/session/stream",
                              params={"session": "s1"}, headers=AUTH)  # fmt: skip
    reader = SSEReader(stream)
    assert [(await reader.event()).event for _ in range(2)] == ["hello", "snapshot"]
    real_fsync = os.fsync
    calls = [0]

    def fsync(fd: int) -> None:
        calls[0] += 1
        if calls[0] == 1:  # the request's own sync; the rewrite's syncs succeed
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    status, body = await _post(client, _lines("b0"))
    monkeypatch.undo()
    assert status == 200, body  # the rewritten journal holds it: acknowledged
    frames = [await reader.event() for _ in range(3)]  # the item, then the reset and snapshot
    assert [f.event for f in frames] == ["assistant", "reset", "snapshot"]
    snap = frames[2].data
    new = snap["epoch"]
    assert new != old
    assert [i["id"] for i in snap["items"]] == [f"{new}.{n}" for n in range(1, 5)]
    stream.close()
    header = json.loads(_journal_file(tmp_path).read_bytes().split(b"\n", 1)[0])
    assert header["epoch"] == new  # rewritten: a restart keeps the new epoch and its ids
    await client.close()
    again = await make_client()
    assert [i["id"] for i in (await _snapshot(again))["items"]] == [i["id"] for i in snap["items"]]


async def test_a_damaged_journal_is_replayed_under_a_new_epoch(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    """The old journal format (no seqs) with a line glued onto a torn fragment, as a full disk
    left it: the ids after it cannot be trusted, so the session gets a new epoch."""
    path = await _journal_of_one_line(make_client, tmp_path)
    header, *_ = path.read_bytes().split(b"\n")
    legacy = [json.dumps({"ts": "2026-01-01T00:00:00Z", "type": "assistant", "content": c})
              for c in ("l1", "l2")]  # fmt: skip
    path.write_bytes(b"\n".join([header, legacy[0].encode(), b'{"type":"assi{"ts":"x"}',
                                 legacy[1].encode(), b""]))  # fmt: skip
    old = json.loads(header)["epoch"]
    client = await make_client()
    snap = await _snapshot(client)
    assert snap["epoch"] != old
    assert [(i["id"], i["content"]) for i in snap["items"]] == [
        (f"{snap['epoch']}.1", "l1"),
        (f"{snap['epoch']}.2", "l2"),
    ]
    assert json.loads(path.read_bytes().split(b"\n", 1)[0])["epoch"] == snap["epoch"]
    assert (await (await client.get("/health")).json())["parse_errors"] == 1


async def test_an_old_journal_without_seqs_keeps_its_ids(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    path = await _journal_of_one_line(make_client, tmp_path)
    header = path.read_bytes().split(b"\n")[0]
    legacy = b"".join(json.dumps({"ts": "2026-01-01T00:00:00Z", "type": "user", "content": c})
                      .encode() + b"\n" for c in ("u1", "u2", "u3"))  # fmt: skip
    path.write_bytes(header + b"\n" + legacy)
    epoch = json.loads(header)["epoch"]
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "new"}])
    snap = await _snapshot(client)
    assert [(i["id"], i["content"]) for i in snap["items"]] == [
        (f"{epoch}.1", "u1"),
        (f"{epoch}.2", "u2"),
        (f"{epoch}.3", "u3"),
        (f"{epoch}.4", "new"),
    ]


async def test_sessions_are_indexed_at_start_and_replayed_when_first_read(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    for session in ("s1", "s2"):
        await ingest(client, [{"type": "user", "content": f"{session} hello"},
                              {"type": "assistant", "content": "hi"}], session=session)  # fmt: skip
    before = await _snapshot(client, "s2")
    await client.close()
    replayed: list[str] = []
    real = journal_module.replay

    def counting(path: str | Path) -> Any:
        replayed.append(str(path))
        return real(path)

    monkeypatch.setattr(journal_module, "replay", counting)
    client = await make_client()
    sessions = (await (await client.get(f"/workspace/{WS_ID}/sessions", headers=AUTH))
                .json())["sessions"]  # fmt: skip
    assert {s["id"]: s["items"] for s in sessions} == {"s1": None, "s2": None}
    assert all(s["started_at"] for s in sessions) and replayed == []
    assert await _snapshot(client, "s2") == before
    assert len(replayed) == 1
    # Ingesting into a session not read yet replays it first: numbering continues.
    await ingest(client, [{"type": "assistant", "content": "more"}], session="s1")
    items = (await _snapshot(client, "s1"))["items"]
    assert [i["seq"] for i in items] == [1, 2, 3] and len(replayed) == 2
    assert state_of(client).store.workspaces[WS_ID].sessions["s1"].loader is None


async def test_a_journal_without_a_header_is_moved_aside(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    path = await _journal_of_one_line(make_client, tmp_path)
    path.write_bytes(b"not a header\n")
    client = await make_client()
    assert path.with_name(path.name + ".unreadable").exists() and not path.exists()
    await ingest(client, [{"type": "assistant", "content": "fresh"}])
    assert [i["content"] for i in (await _snapshot(client))["items"]] == ["fresh"]


async def test_fifos_named_like_logs_do_not_hold_up_the_start(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    path = await _journal_of_one_line(make_client, tmp_path)
    os.mkfifo(path.with_name("fifo.jsonl"))
    (tmp_path / "data" / "activity").mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "data" / "activity" / "fifo.jsonl")
    client = await make_client()  # would block on opening a FIFO for reading
    assert [i["content"] for i in (await _snapshot(client))["items"]] == ["a"]
    assert state_of(client).activity.entries(None, 10) == []


async def test_websocket_ingest_on_a_full_disk_answers_then_closes(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    ws = await client.ws_connect("/api/ingest/ws", params={"workspace": WORKSPACE,
                                 "session": "s1"}, headers=AUTH)  # fmt: skip
    await ws.send_str(_lines("a"))
    assert (await ws.receive_json())["accepted"] == 1
    _disk_full_after(monkeypatch, 0, 0)
    await ws.send_str(_lines("b", "c"))
    answer = await ws.receive_json()
    monkeypatch.undo()
    assert answer["error"]["code"] == "disk_full"
    assert (answer["accepted"], answer["first_unstored_line"]) == (1, 1)  # counted per socket
    closing = await ws.receive()
    assert ws.close_code == 1013, closing
    assert [i["content"] for i in (await _snapshot(client))["items"]] == ["a"]


async def test_a_journal_that_cannot_be_replayed_takes_no_more_lines(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    path = await _journal_of_one_line(make_client, tmp_path)
    client = await make_client()  # indexed from its head, not replayed yet
    path.unlink()
    os.mkfifo(path)  # unreadable now: where its whole lines end is unknown
    status, body = await _post(client, _lines("b"))
    assert status == 507 and body["first_unstored_line"] == 0, body
