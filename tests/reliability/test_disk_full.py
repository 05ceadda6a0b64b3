"""A full disk under the real server: the data dir is a small file system of its own, filled
while sessions are ingested and browse activity is reported, then freed, then the server is
restarted.

What must hold: a request that meets the full disk is answered 507 with a JSON error naming the
data dir and saying which lines were stored; nothing of a line not stored is ever published; every
line acknowledged before is still there after the restart under its id; no id is ever given to
two items (a client resuming by Last-Event-ID gets exactly what it missed, or a reset); and a
server started on a full disk says so in one line and exits 2.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sidemirror.index.search import SearchIndex
from sidemirror.index.search_tables import Doc

from tests.harness.auth import AUTH, NDJSON
from tests.harness.logs import tracebacks
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.harness import Mirror

from .report import record
from .small_fs import fill, small_fs
from .test_crash_restart import ws_id

WS_DIR = "/home/dev/full-disk"
SESSION = "full"
BIG = "x" * 6000  # longer than the slack left in a file's last page: a short write


@pytest.fixture
def full_disk_server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path)
    with small_fs(server.data, 1024):
        try:
            yield server
        finally:
            server.stop()


def _post(server: Server, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    reply = server.exchange("POST", path, body, headers, timeout=20)
    return reply.status, reply.json_or_text()


def _ingest(server: Server, contents: list[str]) -> tuple[int, Any]:
    body = "".join(json.dumps({"type": "assistant", "content": c}) + "\n" for c in contents)
    query = urllib.parse.urlencode({"workspace": WS_DIR, "session": SESSION})
    return _post(server, f"/api/ingest?{query}", body.encode(), NDJSON)


def _report(server: Server, commands: list[str]) -> tuple[int, Any]:
    """Entries named by their commands; `big` carries a URL longer than a page's slack."""
    body = json.dumps(
        [
            {
                "command": c,
                "workspace": WS_DIR,
                **({"url": f"https://x.test/{BIG}"} if c == "big" else {}),
            }
            for c in commands
        ]  # fmt: skip
    ).encode()
    return _post(server, "/api/activity", body, {**AUTH, "Content-Type": "application/json"})


def _items(server: Server) -> dict[str, str]:
    """id -> content of every item of the session, in order."""
    snap = server.snapshot(ws_id(WS_DIR), SESSION)
    return {i["id"]: i["content"] for i in snap["items"]}


def _is_507(status: int, body: Any, server: Server) -> bool:
    if status != 507 or not isinstance(body, dict):
        return False
    error = body.get("error", {})
    return error.get("code") == "disk_full" and str(server.data) in error.get("message", "")


async def _resume(server: Server, held: dict[str, str]) -> Mirror:
    """A client that held `held` before the restart resumes from its last id."""
    path = f"/workspace/{ws_id(WS_DIR)}/session/stream?session={SESSION}&limit=10000"
    mirror = Mirror(server, path, name="resumer", dense=True)
    mirror.items = [{"id": k, "content": v} for k, v in held.items()]
    mirror.last_id = list(held)[-1]
    stop = asyncio.Event()
    task = asyncio.create_task(mirror.run(stop))
    want = _items(server)
    deadline = asyncio.get_running_loop().time() + 30
    while asyncio.get_running_loop().time() < deadline:
        if [i["id"] for i in mirror.items] == list(want) and mirror.connects:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await task
    return mirror


def test_ingest_on_a_full_disk_loses_no_acknowledged_line_and_reuses_no_id(
    full_disk_server: Server,
) -> None:
    server = full_disk_server
    server.start()
    assert _ingest(server, [f"a{i}" for i in range(5)])[0] == 200
    acked = _items(server)
    published: dict[str, str] = dict(acked)

    server.wait_settled()  # its start-up writes must not land on the full disk
    filler = fill(server.data)
    full_status, full_body = _ingest(server, [BIG, "b1"])
    published.update(_items(server))  # whatever the server showed clients meanwhile
    if full_status == 200:
        acked = _items(server)
    filler.unlink()

    status, body = _ingest(server, ["c0", "c1"])
    assert status == 200, body
    acked = _items(server)
    published.update(acked)
    held_by_client = dict(acked)
    server.stop()

    server.start()
    after = _items(server)
    lost = {k: v for k, v in acked.items() if after.get(k) != v}
    reused = {k: (v, after[k]) for k, v in published.items() if k in after and after[k] != v}
    mirror = asyncio.run(_resume(server, held_by_client))
    record(
        "disk full: ingest (tmpfs, short write)",
        {
            "status": full_status,
            "body": full_body,
            "lost": len(lost),
            "reused_ids": len(reused),
            "resets": mirror.resets,
        },  # fmt: skip
        trials=1,
    )
    assert not lost, f"acknowledged lines lost after the restart: {lost}"
    assert not reused, f"ids given to another item after the restart: {reused}"
    assert _is_507(full_status, full_body, server), (full_status, full_body)
    assert full_body["accepted"] == 0 and full_body["first_unstored_line"] == 0, full_body
    assert not any(v.startswith("xxx") for v in published.values()), "published, not stored"
    assert list(after.values()) == [*(f"a{i}" for i in range(5)), "c0", "c1"]
    assert mirror.duplicates == 0 and mirror.gaps == 0, mirror.reset_log
    assert [i["id"] for i in mirror.items] == list(after)
    assert not tracebacks(server.stderr()), server.stderr()[-3000:]


def test_a_line_is_all_or_nothing_and_the_answer_says_which_were_stored(
    full_disk_server: Server,
) -> None:
    server = full_disk_server
    server.start()
    assert _ingest(server, ["first"])[0] == 200
    server.wait_settled()  # its start-up writes must not land on the full disk
    filler = fill(server.data)
    # Small lines fit in the slack of the journal's last page; the big one does not.
    status, body = _ingest(server, ["s1", "s2", BIG, "s3"])
    stored = list(_items(server).values())
    filler.unlink()
    assert _is_507(status, body, server), (status, body)
    assert body["accepted"] == 2 and body["first_unstored_line"] == 2, body
    assert stored == ["first", "s1", "s2"]
    server.stop()
    server.start()
    assert list(_items(server).values()) == ["first", "s1", "s2"]
    assert _ingest(server, ["s3"])[0] == 200
    assert list(_items(server).values()) == ["first", "s1", "s2", "s3"]


def test_activity_on_a_full_disk_loses_no_acknowledged_entry_and_reuses_no_id(
    full_disk_server: Server,
) -> None:
    server = full_disk_server
    server.start()
    status, body = _report(server, [f"a{i}" for i in range(3)])
    assert status == 200, body
    acked = dict(zip(body["ids"], ["a0", "a1", "a2"], strict=True))
    server.wait_settled()  # its start-up writes must not land on the full disk
    filler = fill(server.data)
    full_status, full_body = _report(server, ["b0", "big"])
    published = _activity(server)  # whatever the server showed clients meanwhile
    filler.unlink()
    status, body = _report(server, ["c0"])
    assert status == 200, body
    acked[body["ids"][0]] = "c0"
    if full_status == 200:
        acked.update(zip(full_body["ids"], ["b0", "big"], strict=True))
    published.update(acked)
    server.stop()
    server.start()
    after = _activity(server)
    lost = {k: v for k, v in acked.items() if after.get(k) != v}
    reused = {k: (v, after[k]) for k, v in published.items() if k in after and after[k] != v}
    record(
        "disk full: activity (tmpfs, short write)",
        {"status": full_status, "body": full_body, "lost": len(lost), "reused_ids": len(reused)},
        trials=1,
    )
    assert not lost, f"acknowledged entries lost after the restart: {lost} (have {after})"
    assert not reused, f"ids given to another entry after the restart: {reused}"
    assert _is_507(full_status, full_body, server), (full_status, full_body)
    assert full_body["accepted"] == 1 and full_body["first_unstored"] == 1, full_body
    assert "big" not in published.values(), "an entry was published though it was not stored"
    assert list(after.values()) == ["a0", "a1", "a2", "b0", "c0"]
    assert not tracebacks(server.stderr()), server.stderr()[-3000:]


def _activity(server: Server) -> dict[str, str]:
    """id -> command of every activity entry of the workspace (the MCP read: one JSON answer)."""
    base = {**AUTH, "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}

    def call(body: dict[str, Any], sid: str | None = None) -> tuple[str | None, Any]:
        headers = {**base, **({"Mcp-Session-Id": sid} if sid else {})}
        req = urllib.request.Request(
            server.url("/mcp"), data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return resp.headers.get("Mcp-Session-Id"), json.loads(raw) if raw else None

    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "disk-full", "version": "1"}}  # fmt: skip
    sid, _ = call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    call({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    args = {"workspace": WS_DIR, "limit": 1000}
    params = {"name": "sidemirror_get_activity", "arguments": args}
    _, answer = call({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, sid)
    entries = answer["result"]["structuredContent"]["entries"]
    return {e["id"]: e["command"] for e in entries}


def test_start_on_a_full_disk_says_so_in_one_line_and_exits_2(tmp_path: Path) -> None:
    server = Server(tmp_path)
    with small_fs(server.data, 256):
        fill(server.data)
        try:
            with pytest.raises(RuntimeError):
                server.start()
        finally:
            server.stop()  # a server that did start must not outlive the test
        assert server.proc is not None and server.proc.returncode == 2
        err = server.stderr().strip()
        assert len(err.splitlines()) == 1, err
        assert "Traceback" not in err
        assert str(server.data) in err and "No space left on device" in err, err


def test_the_search_index_waits_out_a_full_disk_and_loses_no_row(tmp_path: Path) -> None:
    """Rows the disk refused are kept and written once it has room: the writer neither dies
    (a traceback, then no search ever again) nor drops them."""
    data = tmp_path / "data"
    with small_fs(data, 1024):
        index = SearchIndex(data)
        index.start()
        try:
            filler = fill(data)
            ts = "2026-12-02T02:50:00.000Z"
            body = "refusedword " + "lorem ipsum dolor sit amet " * 200
            docs = [Doc("w" * 12, "s1", "e1", n, "assistant", ts, body) for n in range(1, 41)]
            index.add_live(docs)
            ticket = index.written()
            wait_until(lambda: index.write_failures > 0, 30, "the full disk refusing a write")
            assert not index.wait_written(ticket, timeout=0.5), "written on a full disk?"
            filler.unlink()
            assert index.wait_written(ticket, timeout=30), "never written once the disk had room"
            hits = index.search("refusedword", limit=100)
            assert sorted(hit.seq for hit in hits) == list(range(1, 41))
        finally:
            index.stop()
