"""Browse activity: ingest, redaction, pairing, the ring, gaps, resume, refs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sidemirror.activity.entries import prepare_entry
from sidemirror.activity.log import ActivityLog
from sidemirror.core.store import workspace_id_for
from sidemirror.web.state import APP_STATE

from tests.harness.auth import AUTH
from tests.server.sse import SSEReader
from tests.server.support import EXT_ORIGIN, WS_UPGRADE, ClientFactory

JSON = {**AUTH, "Content-Type": "application/json"}
WS_DIR = "/home/dev/project"
WS_ID = workspace_id_for(WS_DIR)


async def post(client: TestClient[Any, Any], body: Any) -> dict[str, Any]:
    resp = await client.post("/api/activity", data=json.dumps(body), headers=JSON)
    assert resp.status == 200, await resp.text()
    result: dict[str, Any] = await resp.json()
    return result


def epoch_of(client: TestClient[Any, Any]) -> str:
    return client.server.app[APP_STATE].activity.epoch


# --- pairing ---


async def test_start_and_end_are_separate_events_and_end_carries_start_id(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    start = {
        "type": "command_start",
        "request_id": "r1",
        "command": "click",
        "args": ["@e3"],
        "workspace": WS_DIR,
        "ts": "2026-01-01T00:00:00.000Z",
    }
    end = {**start, "type": "command_end", "ts": "2026-01-01T00:00:00.250Z"}
    other_end = {"type": "command_end", "request_id": "nope", "command": "click"}
    out = await post(client, [start, end, other_end])
    assert out["accepted"] == 3 and out["rejected"] == 0
    e = epoch_of(client)
    assert out["ids"] == [f"{e}.1", f"{e}.2", f"{e}.3"]
    resp = await client.get("/activity/stream", headers=AUTH)
    reader = SSEReader(resp)
    frames = [await reader.event() for _ in range(3)]
    assert [f.event for f in frames] == ["activity"] * 3
    assert [f.id for f in frames] == out["ids"] == [f.data["id"] for f in frames]
    s, t, u = (f.data for f in frames)
    assert (s["type"], s["start_id"], s["status"]) == ("command_start", None, None)
    assert (t["type"], t["start_id"], t["status"], t["duration_ms"]) == (
        "command_end",
        f"{e}.1",
        "ok",
        250,
    )
    assert t["workspace"] == WS_ID
    assert u["start_id"] is None and u["status"] == "ok"
    resp.close()


async def test_end_with_error_is_an_error_and_keeps_reported_duration(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    await post(client, {"type": "command_start", "request_id": "r", "command": "goto"})
    await post(
        client,
        {
            "type": "command_end",
            "request_id": "r",
            "command": "goto",
            "duration_ms": 0,
            "error": "net::ERR_NAME_NOT_RESOLVED",
        },
    )
    (_, end) = client.server.app[APP_STATE].activity.entries(None, 10)
    assert (end.status, end.duration_ms, end.error) == ("error", 0, "net::ERR_NAME_NOT_RESOLVED")


# --- redaction ---

REDACTION_TABLE: list[tuple[dict[str, Any], str, list[str]]] = [
    ({"command": "fill", "args": ["@e5", "hunter2"]}, "fill", ["@e5", "[REDACTED:typed]"]),
    ({"command": "fill @e5 hunter2"}, "fill", ["@e5", "[REDACTED:typed]"]),
    (
        {"command": "fill", "args": ["#login input[name=pw]", "hunter2"]},
        "fill",
        ["#login input[name=pw]", "[REDACTED:typed]"],
    ),
    (
        {"command": 'type "role=textbox[name=\\"Password\\"]" "my secret"'},
        "type",
        ['role=textbox[name="Password"]', "[REDACTED:typed]"],
    ),
    ({"command": "type", "args": ["hunter2"]}, "type", ["[REDACTED:typed]"]),
    (
        {"command": "type", "args": ["e12", "a", "b"]},
        "type",
        ["e12", "[REDACTED:typed]", "[REDACTED:typed]"],
    ),
    ({"command": "press", "args": ["@e2", "Enter"]}, "press", ["@e2", "[REDACTED:typed]"]),
    ({"command": "press", "args": ["Enter"]}, "press", ["Enter"]),
    ({"command": "press", "args": ["x"]}, "press", ["[REDACTED:typed]"]),
    (
        {"command": "select", "args": ["@e9", "Visa", "Mastercard"]},
        "select",
        ["@e9", "[REDACTED:typed]", "[REDACTED:typed]"],
    ),
    (
        {"command": "browser_type", "args": ["textbox", "e4", "pw"]},
        "browser_type",
        ["textbox", "[REDACTED:typed]", "[REDACTED:typed]"],
    ),
    ({"command": "keyboard type hunter2"}, "keyboard", ["type", "[REDACTED:typed]"]),
    ({"command": "press_key", "args": ["Control+A"]}, "press_key", ["Control+A"]),
    ({"command": "click", "args": ["@e5"]}, "click", ["@e5"]),
    (
        {"command": "goto", "args": ["https://x.test/cb?code=abc123&state=ok"]},
        "goto",
        ["https://x.test/cb?code=[REDACTED:query_secret]&state=ok"],
    ),
    (
        {"command": "goto", "args": ["https://bob:pw123@x.test/"]},
        "goto",
        ["https://bob:[REDACTED:url_credentials]@x.test/"],
    ),
    (
        {"command": "set_headers", "args": ["Authorization: Bearer abc.def"]},
        "set_headers",
        ["Authorization: Bearer [REDACTED:authorization]"],
    ),
    (
        {"command": "header", "args": ["Authorization", "Bearer abc"]},
        "header",
        ["Authorization", "[REDACTED:secret_field]"],
    ),
    (
        {"command": "set_headers", "args": ['{"X-Api-Key":"k1","Accept":"a"}']},
        "set_headers",
        ['{"X-Api-Key":"[REDACTED:secret_field]","Accept":"a"}'],
    ),
    (
        {"command": "env", "args": ["api_token=s3cr3t"]},
        "env",
        ["api_token=[REDACTED:secret_field]"],
    ),
    (
        {"command": "cookies", "args": ["set", "sid", "abc"]},
        "cookies",
        ["set", "sid", "[REDACTED:cookie]"],
    ),
    (
        {"command": "set_cookie", "args": ["sid=abc; Path=/"]},
        "set_cookie",
        ["sid=[REDACTED:cookie]"],
    ),
    (
        {"command": "add_cookies", "args": ['[{"name":"sid","value":"abc"}]']},
        "add_cookies",
        ['[{"name":"sid","value":"[REDACTED:cookie]"}]'],
    ),
    (
        {"command": "eval", "args": ["fetch('/x', {headers: {Cookie: 'a=b'}})"]},
        "eval",
        ["fetch('/x', {headers: {Cookie: '[REDACTED:cookie]'}})"],
    ),
    ({"command": "snapshot", "args": [3, True, None]}, "snapshot", ["3", "true", "null"]),
]


@pytest.mark.parametrize(("raw", "command", "args"), REDACTION_TABLE)
def test_redaction_table(raw: dict[str, Any], command: str, args: list[str]) -> None:
    entry, _ = prepare_entry(raw)
    assert (entry.command, entry.args) == (command, args)


def test_url_result_and_error_are_redacted_and_result_truncated() -> None:
    entry, directory = prepare_entry(
        {
            "command": "goto",
            "workspace": WS_DIR + "/",
            "url": "https://app.test/home?access_token=tok123&tab=2#top",
            "result": "ok " + "x" * 600,
            "error": "token ghp_" + "a" * 36 + " rejected",
        }
    )
    assert entry.url == "https://app.test/home?access_token=[REDACTED:query_secret]&tab=2#top"
    assert entry.result is not None and len(entry.result) == 500 and entry.result.endswith("…")
    assert entry.truncated is True
    assert entry.error == "token [REDACTED:github_token] rejected"
    assert (entry.workspace, directory) == (WS_ID, WS_DIR)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([1], "must be a JSON object"),
        ({"type": "command_end"}, "'command' is required"),
        ({"type": "teleport", "command": "x"}, "unknown activity type 'teleport'"),
        ({"command": "x", "args": "a b"}, "'args' must be a list"),
        ({"command": "x", "status": "fine"}, "'status' must be 'ok' or 'error'"),
        ({"command": "x", "duration_ms": -1}, "'duration_ms' must be a number >= 0"),
        ({"command": "x", "ts": "yesterday"}, "'ts' is not an ISO 8601 time"),
        ({"command": "x", "refs": [{"role": "button"}]}, "refs[0] must be an object with a 'ref'"),
    ],
)
def test_bad_entries_name_the_problem(raw: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        prepare_entry(raw)


def test_server_assigned_fields_and_unknown_fields_are_ignored() -> None:
    entry, _ = prepare_entry(
        {
            "command": "x",
            "id": "evil.9",
            "seq": 9,
            "start_id": "a.1",
            "future_field": 1,
            "type": "navigation",
        }
    )
    assert (entry.id, entry.seq, entry.start_id) == ("", 0, None)


# --- HTTP edges ---


async def test_post_rejects_wrong_type_big_bodies_and_missing_token(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    body = json.dumps({"command": "x"})
    resp = await client.post(
        "/api/activity", data=body, headers={**AUTH, "Content-Type": "text/plain"}
    )
    assert resp.status == 415
    assert (await resp.json())["error"]["code"] == "unsupported_media_type"
    big = json.dumps([{"command": "x", "result": "y" * 1000}] * 1100)
    resp = await client.post("/api/activity", data=big, headers=JSON)
    assert resp.status == 413
    resp = await client.post(
        "/api/activity", data=body, headers={"Content-Type": "application/json"}
    )
    assert resp.status == 401
    resp = await client.get("/activity/stream")
    assert resp.status == 401
    resp = await client.post("/api/activity", data=json.dumps([{"type": "x"}]), headers=JSON)
    assert resp.status == 400 and "entry 0: unknown activity type" in await resp.text()
    out = await post(client, [{"command": "ok"}, {"command": ""}])
    assert (out["accepted"], out["rejected"]) == (1, 1)
    assert out["errors"] == ["entry 1: 'command' is required for a command_end entry"]


async def test_websocket_ingest_and_origin_check(make_client: ClientFactory) -> None:
    client = await make_client()
    async with client.ws_connect("/api/activity/ws", headers=AUTH) as ws:
        await ws.send_str(json.dumps({"command": "click", "args": ["@e1"]}))
        first = await ws.receive_json()
        await ws.send_str("not json")
        second = await ws.receive_json()
        await ws.send_str(json.dumps([{"command": "fill", "args": ["@e2", "pw"]}]))
        third = await ws.receive_json()
    e = epoch_of(client)
    assert first == {"accepted": 1, "rejected": 0, "ids": [f"{e}.1"]}
    assert second["rejected"] == 1 and second["errors"][0].startswith("frame is not valid JSON")
    assert third["ids"] == [f"{e}.2"] and third["accepted"] == 2
    fill = client.server.app[APP_STATE].activity.entries(None, 1)[0]
    assert fill.args == ["@e2", "[REDACTED:typed]"]
    resp = await client.get(
        "/api/activity/ws",
        headers={**AUTH, "Origin": "https://evil.test", **WS_UPGRADE},
    )
    assert resp.status == 403
    resp = await client.get(
        "/api/activity/ws",
        headers={"Origin": EXT_ORIGIN, **WS_UPGRADE},
    )
    assert resp.status == 401


# --- stream: live, filter, ring, gap, resume ---


async def test_stream_filters_by_workspace_and_goes_live_in_order(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    await post(client, [{"command": "a", "workspace": WS_DIR}, {"command": "b", "workspace": "/x"}])
    ticket = (await (await client.post("/api/ticket", headers=AUTH)).json())["ticket"]
    only = await client.get("/activity/stream", params={"workspace": WS_ID, "ticket": ticket})
    every = await client.get("/activity/stream", headers=AUTH)
    r_only, r_all = SSEReader(only), SSEReader(every)
    assert (await r_only.frame()).raw == b"retry: 2000\n\n"
    assert (await r_only.event()).data["command"] == "a"
    assert [(await r_all.event()).data["command"] for _ in range(2)] == ["a", "b"]
    await post(client, [{"command": "c", "workspace": "/x"}, {"command": "d", "workspace": WS_ID}])
    frame = await r_only.event()
    e = epoch_of(client)
    assert frame.raw.startswith(f"id: {e}.4\nevent: activity\ndata: {{".encode())
    assert frame.data["command"] == "d"
    assert [(await r_all.event()).id for _ in range(2)] == [f"{e}.3", f"{e}.4"]
    only.close()
    every.close()


async def test_ring_keeps_1000_per_workspace_and_old_cursor_gets_gap(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    await post(client, [{"command": f"c{i}", "workspace": WS_DIR} for i in range(1, 1006)])
    await post(client, {"command": "other", "workspace": "/elsewhere"})
    log = client.server.app[APP_STATE].activity
    assert len(log.entries(WS_ID, 5000)) == 1000 and len(log.entries(None, 5000)) == 1001
    e = log.epoch
    for params in ({"workspace": WS_ID}, {}):
        resp = await client.get(
            "/activity/stream", params={**params, "last_event_id": f"{e}.2"}, headers=AUTH
        )
        reader = SSEReader(resp)
        gap = await reader.event()
        assert gap.raw == b'event: gap\ndata: {"type":"gap","missed":3,"reset":false}\n\n'
        first = await reader.event()
        assert (first.id, first.data["command"]) == (f"{e}.6", "c6")
        resp.close()
    # Inside the ring: exact replay, no gap.
    resp = await client.get("/activity/stream", headers={**AUTH, "Last-Event-ID": f"{e}.1004"})
    reader = SSEReader(resp)
    assert [(await reader.event()).id for _ in range(2)] == [f"{e}.1005", f"{e}.1006"]
    resp.close()
    # No cursor: the ring (or the latest `limit`), then live.
    resp = await client.get("/activity/stream", params={"limit": "2"}, headers=AUTH)
    reader = SSEReader(resp)
    assert [(await reader.event()).id for _ in range(2)] == [f"{e}.1005", f"{e}.1006"]
    resp.close()


async def test_resume_after_restart_continues_ids_and_gaps_old_epochs(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client = await make_client()
    await post(client, [{"command": f"c{i}"} for i in range(1, 4)])
    e = epoch_of(client)
    await client.close()
    client = await make_client()  # a new server on the same data dir
    assert epoch_of(client) == e
    assert (await post(client, {"command": "c4"}))["ids"] == [f"{e}.4"]
    resp = await client.get("/activity/stream", headers={**AUTH, "Last-Event-ID": f"{e}.2"})
    reader = SSEReader(resp)
    assert [(await reader.event()).data["command"] for _ in range(2)] == ["c3", "c4"]
    resp.close()
    resp = await client.get("/activity/stream", headers={**AUTH, "Last-Event-ID": "0ld3p0c.7"})
    reader = SSEReader(resp)
    gap = await reader.event()
    assert (gap.event, gap.data) == ("gap", {"type": "gap", "missed": 0, "reset": True})
    assert (await reader.event()).id == f"{e}.1"
    resp.close()
    await client.close()
    # Losing meta.json means the old epoch is unknown: a new one, seqs still never reused.
    (tmp_path / "data" / "activity" / "meta.json").unlink()
    client = await make_client()
    e2 = epoch_of(client)
    assert e2 != e
    assert (await post(client, {"command": "c5"}))["ids"] == [f"{e2}.5"]
    resp = await client.get("/activity/stream", headers={**AUTH, "Last-Event-ID": f"{e}.4"})
    reader = SSEReader(resp)
    assert (await reader.event()).data["reset"] is True
    assert (await reader.event()).id == f"{e2}.1"
    resp.close()


def test_compaction_keeps_ids_pairs_and_exact_gaps_across_reload(tmp_path: Path) -> None:
    log = ActivityLog(tmp_path, ring_size=3)
    log.report({"type": "command_start", "request_id": "r", "command": "goto"})
    for i in range(8):
        log.report({"command": f"c{i}", "workspace": WS_DIR})
    log.report({"type": "command_end", "request_id": "r", "command": "goto"})
    log.report({"command": "fill @e1 hunter2"})
    lines = (tmp_path / f"{WS_ID}.jsonl").read_text().splitlines()
    assert len(lines) <= 6
    assert "hunter" not in (tmp_path / "_unscoped.jsonl").read_text()
    before = [e.model_dump() for e in log.entries(None, 100)]
    log.close()
    again = ActivityLog(tmp_path, ring_size=3)
    assert [e.model_dump() for e in again.entries(None, 100)] == before
    assert again.entries(None, 2)[0].start_id == f"{log.epoch}.1"
    assert [e.command for e in again.entries(WS_ID, 10)] == ["c5", "c6", "c7"]
    missed, held = again.since(2, WS_ID)  # c0 (seq 2) was read; c1..c4 are gone
    assert (missed, [e.seq for e in held]) == (4, [7, 8, 9])
    assert again.report({"command": "next"}).seq == 12


async def test_refs_endpoint_and_latest_workspace(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.get("/api/activity/latest-workspace", headers=AUTH)
    assert (await resp.json())["workspace"] is None
    refs = [{"ref": "e1", "role": "button", "name": "Sign in", "selector": "#go"}]
    await post(
        client,
        {"command": "snapshot", "url": "https://a.test/p?x=1", "refs": refs, "workspace": WS_DIR},
    )
    await post(
        client, {"type": "navigation", "url": "https://a.test/other", "workspace": "/observer"}
    )
    resp = await client.get("/api/refs", params={"url": "https://a.test/p?x=1#frag"}, headers=AUTH)
    body = await resp.json()
    assert body["refs"] == refs and body["url"] == "https://a.test/p?x=1"
    assert body["workspace"] == WS_ID
    resp = await client.get("/api/refs", params={"url": "https://a.test/none"}, headers=AUTH)
    assert (await resp.json())["refs"] == []
    assert (await client.get("/api/refs", headers=AUTH)).status == 400
    resp = await client.get("/api/activity/latest-workspace", headers=AUTH)
    latest = await resp.json()
    assert (latest["workspace"], latest["directory"]) == (WS_ID, WS_DIR)
