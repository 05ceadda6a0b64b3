"""The session SSE stream on the wire: exact bytes, replay, reset, fanout limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from sidemirror import __version__
from sidemirror.app import create_app
from sidemirror.core.models import AssistantEvent
from sidemirror.web.state import APP_STATE

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory, ingest, make_settings, state_of


async def _setup(client: TestClient[Any, Any], n: int = 3) -> tuple[str, str]:
    await ingest(
        client,
        [
            {"type": "assistant", "content": f"item {i}", "ts": "2026-01-01T00:00:00Z"}
            for i in range(1, n + 1)
        ],
    )
    ws = next(iter(state_of(client).store.workspaces.values()))
    return ws.id, ws.sessions["s1"].epoch


async def _resume(
    client: TestClient[Any, Any], ws_id: str, last_id: str, **params: str
) -> SSEReader:
    """The session stream of a client reconnecting after `last_id` (its Last-Event-ID)."""
    resp = await client.get(
        f"/workspace/{ws_id}/session/stream",
        params=params,
        headers={**AUTH, "Last-Event-ID": last_id},
    )
    return SSEReader(resp)


async def test_both_streams_carry_the_headers_of_every_response(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, _ = await _setup(client, 1)
    for url in (f"/workspace/{ws_id}/session/stream", "/activity/stream"):
        resp = await client.get(url, headers=AUTH)
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
        # Session data is stored nowhere on the way, and never sniffed as another type.
        assert resp.headers["Cache-Control"] == "no-store", url
        assert resp.headers["X-Content-Type-Options"] == "nosniff", url
        assert (await SSEReader(resp).frame()).raw == b"retry: 2000\n\n"
        resp.close()


async def test_hello_and_snapshot_exact_bytes(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 2)
    resp = await client.get(f"/workspace/{ws_id}/session/stream", headers=AUTH)
    assert resp.headers["Content-Type"].startswith("text/event-stream")
    reader = SSEReader(resp)
    assert (await reader.frame()).raw == b"retry: 2000\n\n"
    hello = await reader.frame()
    assert hello.raw == (
        b'event: hello\ndata: {"type":"hello","protocol":1,"epoch":"'
        + epoch.encode()
        + b'","workspace":"'
        + ws_id.encode()
        + b'","session":"s1","version":"'
        + __version__.encode()
        + b'"}\n\n'
    )
    snap = await reader.frame()
    item = (
        '{"id":"%s.%d","ts":"2026-01-01T00:00:00Z","seq":%d,"parent_tool_use_id":null,'
        '"type":"assistant","content":"item %d","truncated":false,"full_length":6,'
        '"segment_id":null}'
    )
    items = ",".join(item % (epoch, i, i, i) for i in (1, 2))
    expected = (
        f'id: {epoch}.2\nevent: snapshot\ndata: {{"type":"snapshot","epoch":"{epoch}",'
        f'"workspace":"{ws_id}","session":"s1","cursor":"{epoch}.2","total":2,"skipped_bytes":0,'
        f'"items":[{items}]}}\n\n'
    )
    assert snap.raw == expected.encode()
    resp.close()


async def test_replay_after_last_event_id_is_exact(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 5)
    reader = await _resume(client, ws_id, f"{epoch}.3")
    assert (await reader.event()).event == "hello"
    f4 = await reader.event()
    assert f4.raw.startswith(f"id: {epoch}.4\nevent: assistant\ndata: ".encode())
    assert f4.data["content"] == "item 4" and f4.data["id"] == f4.id
    f5 = await reader.event()
    assert f5.id == f"{epoch}.5"
    await ingest(client, [{"type": "user", "content": "live one"}])
    live = await reader.event()
    assert (live.id, live.event, live.data["content"]) == (f"{epoch}.6", "user", "live one")
    reader.resp.close()


async def test_last_event_id_query_parameter_works_too(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 3)
    resp = await client.get(
        f"/workspace/{ws_id}/session/stream", params={"last_event_id": f"{epoch}.2"}, headers=AUTH
    )
    reader = SSEReader(resp)
    await reader.event()
    assert (await reader.event()).id == f"{epoch}.3"
    resp.close()


async def test_stale_id_gets_reset_then_snapshot(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 3)
    for stale in ("deadbeef.2", f"{epoch}.99", "garbage"):
        reader = await _resume(client, ws_id, stale)
        assert (await reader.event()).event == "hello"
        reset = await reader.event()
        assert reset.raw == (
            b'event: reset\ndata: {"type":"reset","reason":"unknown_or_stale_id",'
            b'"epoch":"' + epoch.encode() + b'"}\n\n'
        )
        snap = await reader.event()
        assert snap.event == "snapshot" and snap.id == f"{epoch}.3"
        assert [i["seq"] for i in snap.data["items"]] == [1, 2, 3]
        reader.resp.close()


async def test_snapshot_limit_and_latest_items(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 10)
    resp = await client.get(f"/workspace/{ws_id}/session", params={"limit": "4"}, headers=AUTH)
    body = await resp.json()
    assert body["total"] == 10 and body["cursor"] == f"{epoch}.10"
    assert [i["content"] for i in body["items"]] == ["item 7", "item 8", "item 9", "item 10"]
    bad = await client.get(f"/workspace/{ws_id}/session", params={"limit": "-1"}, headers=AUTH)
    assert bad.status == 400


async def test_hostile_text_is_one_intact_event(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 1)
    reader = await _resume(client, ws_id, f"{epoch}.1")
    await reader.event()
    evil = "before\n\nevent: x\ndata: y\r\nid: 666\rafter"
    await ingest(client, [{"type": "assistant", "content": evil}])
    frame = await reader.event()
    assert frame.event == "assistant" and frame.id == f"{epoch}.2"
    assert [k for k, _ in frame.fields] == ["id", "event", "data"]
    assert frame.data["content"] == evil
    reader.resp.close()


async def test_truncation_and_full_item(make_client: ClientFactory) -> None:
    client = await make_client(max_chars=20)
    long_text = "word " * 100
    await ingest(client, [{"type": "assistant", "content": long_text}])
    ws = next(iter(state_of(client).store.workspaces.values()))
    body = await (await client.get(f"/workspace/{ws.id}/session", headers=AUTH)).json()
    item = body["items"][0]
    assert item["truncated"] is True and item["full_length"] == len(long_text)
    assert len(item["content"]) <= 20 and item["content"].endswith("…")
    full = await (
        await client.get(f"/workspace/{ws.id}/session/items/{item['id']}", headers=AUTH)
    ).json()
    assert full["content"] == long_text and full["truncated"] is False
    missing = await client.get(f"/workspace/{ws.id}/session/items/nope.1", headers=AUTH)
    assert missing.status == 404


async def test_redaction_before_storage(make_client: ClientFactory) -> None:
    client = await make_client()
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    await ingest(
        client, [{"type": "tool_result", "tool_use_id": "t1", "output": f"token={secret}"}]
    )
    ws = next(iter(state_of(client).store.workspaces.values()))
    for path in (
        f"/workspace/{ws.id}/session",
        f"/workspace/{ws.id}/session/items/{ws.sessions['s1'].epoch}.1",
    ):
        text = await (await client.get(path, headers=AUTH)).text()
        assert secret not in text and "[REDACTED:" in text


async def test_follow_mode_switches_to_the_new_session(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, _ = await _setup(client, 1)
    resp = await client.get(f"/workspace/{ws_id}/session/stream", headers=AUTH)
    reader = SSEReader(resp)
    assert (await reader.event()).event == "hello"
    assert (await reader.event()).event == "snapshot"
    await ingest(client, [{"type": "user", "content": "new session"}], session="s2")
    status = await reader.event()
    assert status.event == "session_status" and status.id is None
    assert status.data["session"] == "s2"
    snap = await reader.event()
    assert snap.event == "snapshot" and snap.data["session"] == "s2"
    assert [i["content"] for i in snap.data["items"]] == ["new session"]
    resp.close()


async def test_pinned_session_ignores_other_sessions(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, epoch = await _setup(client, 1)
    reader = await _resume(client, ws_id, f"{epoch}.1", session="s1")
    await reader.event()
    await ingest(client, [{"type": "user", "content": "other"}], session="s2")
    await ingest(client, [{"type": "user", "content": "mine"}], session="s1")
    frame = await reader.event()
    assert frame.data["content"] == "mine" and frame.id == f"{epoch}.2"
    reader.resp.close()


async def test_unknown_workspace_and_session_are_404(make_client: ClientFactory) -> None:
    client = await make_client()
    ws_id, _ = await _setup(client, 1)
    for path, params in [
        ("/workspace/000000000000/sessions", {}),
        ("/workspace/000000000000/session", {}),
        (f"/workspace/{ws_id}/session", {"session": "nope"}),
        (f"/workspace/{ws_id}/session/stream", {"session": "nope"}),
    ]:
        resp = await client.get(path, params=params, headers=AUTH)
        assert resp.status == 404, path
        assert "error" in await resp.json()


async def test_workspaces_and_sessions_listing(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "a"}], workspace="/home/dev/alpha/")
    await ingest(client, [{"type": "user", "content": "b"}], workspace="/home/dev/beta")
    body = await (await client.get("/api/workspaces", headers=AUTH)).json()
    names = [w["name"] for w in body["workspaces"]]
    assert names == ["beta", "alpha"]  # newest activity first
    alpha = body["workspaces"][1]
    import hashlib

    assert alpha["id"] == hashlib.sha256(b"/home/dev/alpha").hexdigest()[:12]
    assert alpha["directory"] == "/home/dev/alpha" and alpha["active"] is True
    sessions = await (await client.get(f"/workspace/{alpha['id']}/sessions", headers=AUTH)).json()
    assert [(s["id"], s["items"]) for s in sessions["sessions"]] == [("s1", 1)]
    assert [(s["state"], s["exact"]) for s in sessions["sessions"]] == [("idle", False)]


async def test_ingest_counts_rejected_lines(make_client: ClientFactory) -> None:
    client = await make_client()
    result = await ingest(
        client,
        [
            {"type": "assistant", "content": "ok"},
            {"type": "bogus"},
            {"type": "tool_use", "name": "Bash"},
        ],
    )
    assert result["accepted"] == 1 and result["rejected"] == 2
    health = await (await client.get("/health")).json()
    assert health["parse_errors"] == 2


async def test_resume_across_restart_gives_exactly_the_missing_items(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path)
    client = await aiohttp_client(create_app(settings, TOKEN))
    await ingest(client, [{"type": "assistant", "content": f"a{i}"} for i in range(5)])
    ws = next(iter(state_of(client).store.workspaces.values()))
    epoch = ws.sessions["s1"].epoch
    await client.close()

    # A new server process on the same data dir: more items arrive, the client resumes.
    client2 = await aiohttp_client(create_app(settings, TOKEN))
    await ingest(client2, [{"type": "assistant", "content": f"b{i}"} for i in range(3)])
    resp = await client2.get(
        f"/workspace/{ws.id}/session/stream", headers={**AUTH, "Last-Event-ID": f"{epoch}.4"}
    )
    reader = SSEReader(resp)
    assert (await reader.event()).data["epoch"] == epoch
    got = [await reader.event() for _ in range(4)]
    assert [f.id for f in got] == [f"{epoch}.{n}" for n in range(5, 9)]
    assert [f.data["content"] for f in got] == ["a4", "b0", "b1", "b2"]
    resp.close()


async def test_torn_journal_line_is_dropped_on_restart(aiohttp_client: Any, tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    client = await aiohttp_client(create_app(settings, TOKEN))
    await ingest(client, [{"type": "assistant", "content": "whole"}])
    await client.close()
    journal = next((tmp_path / "data" / "ingest").glob("*/*.jsonl"))
    with journal.open("ab") as fh:
        fh.write(b'{"type":"assistant","content":"torn')
    client2 = await aiohttp_client(create_app(settings, TOKEN))
    await ingest(client2, [{"type": "assistant", "content": "after"}])
    body = await (
        await client2.get(
            f"/workspace/{next(iter(state_of(client2).store.workspaces))}/session", headers=AUTH
        )
    ).json()
    assert [i["content"] for i in body["items"]] == ["whole", "after"]


async def test_stalled_client_never_blocks_others_and_memory_stays_bounded(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, queue_size=256)
    app = create_app(settings, TOKEN)
    server = TestServer(app)
    await server.start_server()
    try:
        state = app[APP_STATE]
        store = state.store
        ws = store.ensure_workspace("/home/dev/load", "events")
        log = store.ensure_session(ws, "s1", "events", "e1")
        store.append(log, AssistantEvent(content="first"))
        store.touch(log)
        path = f"/workspace/{ws.id}/session/stream?session=s1"
        # The stalled client: a raw socket that sends the request and never reads a byte.
        reader_, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nLast-Event-ID: e1.1\r\n\r\n".encode()
        )
        await writer.drain()
        client = TestClient(server)
        readers = []
        for _ in range(2):
            resp = await client.get(path, headers={**AUTH, "Last-Event-ID": "e1.1"})
            readers.append(SSEReader(resp))
        for r in readers:
            assert (await r.event()).event == "hello"
        while state.hub.subscriber_count() < 3:
            await asyncio.sleep(0.01)

        total = 20_000
        received = [0, 0]

        async def consume(i: int) -> None:
            expected = 2
            while expected <= total + 1:
                frame = await readers[i].event()
                assert frame.event == "assistant", frame.raw[:200]
                assert frame.id == f"e1.{expected}"
                expected += 1
                received[i] += 1

        consumers = [asyncio.create_task(consume(i)) for i in range(2)]
        payload = "x" * 400
        for n in range(total):
            store.append(log, AssistantEvent(content=f"{n} {payload}"))
            if n % 200 == 0:
                await asyncio.sleep(0)  # let sockets flush, as a real source would
        await asyncio.wait_for(asyncio.gather(*consumers), timeout=120)
        assert received == [total, total]
        # The stalled client's queue never grew past its bound; it was told to resync instead.
        subs = [s for subs in state.hub._topics.values() for s in subs]
        assert all(s.queue.qsize() <= s.maxsize for s in subs)
        assert any(s.overflows > 0 for s in subs)
        writer.close()
        await client.close()
    finally:
        await server.close()


async def test_debug_trace_has_every_event_as_sent(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    trace = tmp_path / "trace" / "events.jsonl"
    client = await make_client(debug_events_jsonl=trace, max_chars=10)
    ws_id, epoch = await _setup(client, 1)
    reader = await _resume(client, ws_id, f"{epoch}.1")
    await reader.event()
    await ingest(client, [{"type": "assistant", "content": "a long enough text to cut"}])
    frame = await reader.event()
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert lines[0]["event"] == "server_start"
    sent = json.loads(frame.raw.split(b"data: ", 1)[1])
    # Each line says which session, then the event exactly as the stream sent it.
    items = [line for line in lines if line["event"] == "assistant"]
    assert len(items) == 2
    assert items[-1] == {"workspace": ws_id, "session": "s1", "event": "assistant", **sent}
    assert TOKEN not in trace.read_text()
    reader.resp.close()


async def test_ingest_takes_long_lines_and_a_last_line_without_newline(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    big = "x" * (3 << 20)  # tool outputs are often far over StreamReader's 128 KiB line limit
    body = (
        json.dumps({"type": "tool_result", "tool_use_id": "t", "output": big})
        + "\n"
        + json.dumps({"type": "user", "content": "no newline at the end"})
    )
    resp = await client.post(
        "/api/ingest",
        params={"workspace": "/w", "format": "events", "session": "s1"},
        data=body.encode(),
        headers=NDJSON,
    )
    assert (await resp.json()) == {"accepted": 2, "rejected": 0}
    log = next(iter(state_of(client).store.workspaces.values())).sessions["s1"]
    assert log.items[0].output == big  # type: ignore[union-attr]
    assert log.items[1].content == "no newline at the end"  # type: ignore[union-attr]


async def test_resume_from_an_id_older_than_the_memory_window(make_client: ClientFactory) -> None:
    client = await make_client()
    n = 2600  # more than the in-memory window: the oldest items live in the spill file
    await ingest(client, [{"type": "assistant", "content": f"m{i}"} for i in range(n)])
    log = next(iter(state_of(client).store.workspaces.values())).sessions["s1"]
    assert len(log.items) == n and len(log.items._recent) < n
    resp = await client.get(
        f"/workspace/{log.workspace_id}/session/stream",
        headers={**AUTH, "Last-Event-ID": f"{log.epoch}.10"},
    )
    reader = SSEReader(resp)
    await reader.event()
    got = [await reader.event() for _ in range(n - 10)]
    assert [f.data["content"] for f in got] == [f"m{i}" for i in range(10, n)]
    assert [f.id for f in got] == [f"{log.epoch}.{s}" for s in range(11, n + 1)]
    full = await client.get(
        f"/workspace/{log.workspace_id}/session/items/{log.epoch}.5", headers=AUTH
    )
    assert (await full.json())["content"] == "m4"
    resp.close()


def test_spill_dirs_are_per_process_and_dead_ones_are_removed(tmp_path: Path) -> None:
    import os

    from sidemirror.app import fresh_spill_dir

    root = tmp_path / "spill"
    (root / "999999999").mkdir(parents=True)  # a pid that cannot be alive
    (root / "999999999" / "x.jsonl").write_text("stale")
    alive = root / str(os.getppid())  # another live process's cache stays
    alive.mkdir()
    own = fresh_spill_dir(root)
    assert own == root / str(os.getpid())
    assert not (root / "999999999").exists() and alive.exists()
