"""Agent formats through the real HTTP ingest and SSE stream (stream-json, ACP, codex, auto)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from sidemirror.core.store import workspace_id_for

from tests.harness.auth import AUTH, NDJSON
from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory

FIXTURES = FIXTURE_ROOT
WORKSPACE = "/home/dev/project"
WS_ID = workspace_id_for(WORKSPACE)


def lines_of(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


async def post(client: Any, lines: list[str], fmt: str) -> dict[str, Any]:
    resp = await client.post(
        "/api/ingest",
        params={"workspace": WORKSPACE, "format": fmt},
        data="".join(line + "\n" for line in lines),
        headers=NDJSON,
    )
    assert resp.status == 200, await resp.text()
    result: dict[str, Any] = await resp.json()
    return result


async def test_partial_text_streams_as_deltas_then_the_full_item(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    lines = lines_of(FIXTURES / "stream-json" / "streaming-haiku.jsonl")
    session = json.loads(lines[0])["session_id"]
    assert (await post(client, lines[:1], "stream-json"))["accepted"] == 1  # system/init
    stream = await client.get(
        f"/workspace/{WS_ID}/session/stream", params={"session": session}, headers=AUTH
    )
    reader = SSEReader(stream)
    assert (await reader.event()).event == "hello"
    assert (await reader.event()).event == "snapshot"
    result = await post(client, lines[1:], "stream-json")
    assert result == {"accepted": len(lines) - 1, "rejected": 0, "status": "ok"}
    deltas: list[Any] = []
    while True:
        frame = await asyncio.wait_for(reader.event(), 5)
        if frame.event == "assistant_delta":
            assert frame.id is None  # live only: Last-Event-ID keeps naming stored items
            deltas.append(frame.data)
        elif frame.event == "assistant":
            final = frame.data
            break
    assert len(deltas) > 5
    assert "".join(d["text"] for d in deltas) == final["content"]
    assert {d["segment_id"] for d in deltas} == {final["segment_id"]}
    turn = await asyncio.wait_for(reader.event(), 5)
    assert turn.event == "turn_complete" and turn.data["cost_source"] == "reported"
    stream.close()
    snap = await client.get(
        f"/workspace/{WS_ID}/session", params={"session": session}, headers=AUTH
    )
    items = (await snap.json())["items"]
    assert [i["type"] for i in items] == ["assistant", "turn_complete"]


async def test_failed_run_reports_failed_status(make_client: ClientFactory) -> None:
    client = await make_client()
    result_line = {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "session_id": "s9",
        "duration_ms": 3,
        "usage": {},
    }
    result = await post(client, [json.dumps(result_line)], "stream-json")
    assert result["status"] == "failed"


async def test_auto_detects_each_format(make_client: ClientFactory) -> None:
    client = await make_client()
    cases = {
        "stream-json": FIXTURES / "stream-json" / "plan-mode-ls.jsonl",
        "acp": FIXTURES / "acp" / "bash-foreground.jsonl",
        "codex": next((FIXTURES / "codex").glob("*.jsonl")),
    }
    for agent, path in cases.items():
        result = await post(client, lines_of(path), "auto")
        assert result["rejected"] == 0, (agent, result)
    resp = await client.get(f"/workspace/{WS_ID}/sessions", headers=AUTH)
    sessions = (await resp.json())["sessions"]
    assert sorted(s["agent"] for s in sessions) == ["acp", "claude", "codex"]
    codex = next(s for s in sessions if s["agent"] == "codex")
    assert codex["id"] == "019e1695-0522-7c83-8b39-0dd379793f80"


async def test_auto_reads_an_acp_v1_recording_as_acp_does(make_client: ClientFactory) -> None:
    """claude-agent-acp's v1 recorder names the call in `kind` ({"kind": "initialize" |
    "sessionUpdate" | …, "payload"}) and has no `method`: auto must still see ACP."""
    lines = lines_of(FIXTURES / "acp" / "v1-zed-session-load-replay.jsonl")
    assert "method" not in json.loads(lines[0])
    client = await make_client()
    seen = {}
    for fmt in ("acp", "auto"):
        workspace = f"/home/dev/{fmt}"
        resp = await client.post(
            "/api/ingest",
            params={"workspace": workspace, "format": fmt},
            data="".join(line + "\n" for line in lines),
            headers=NDJSON,
        )
        result = await resp.json()
        resp = await client.get(
            f"/workspace/{workspace_id_for(workspace)}/session",
            params={"session": "<session>"},
            headers=AUTH,
        )
        body = await resp.json()
        # Times are the receiver's clock (a recording has none): all but them must match.
        timing = ("ts", "id", "duration_ms")
        items = [{k: v for k, v in i.items() if k not in timing} for i in body["items"]]
        seen[fmt] = (result, items)
    assert seen["auto"][0]["rejected"] == 0
    assert seen["auto"] == seen["acp"] and len(seen["acp"][1]) > 3


async def test_acp_over_websocket_ingest(make_client: ClientFactory) -> None:
    client = await make_client()
    lines = lines_of(FIXTURES / "acp" / "text-and-thinking.jsonl")
    ws = await client.ws_connect(
        "/api/ingest/ws", params={"workspace": WORKSPACE, "format": "acp"}, headers=AUTH
    )
    for line in lines:
        await ws.send_str(line)
        await ws.receive_json()
    await ws.close()
    resp = await client.get(
        f"/workspace/{WS_ID}/session", params={"session": "<session>"}, headers=AUTH
    )
    items = (await resp.json())["items"]
    assert [i["type"] for i in items] == ["user", "thinking", "assistant", "turn_complete"]


async def test_live_deltas_are_cut_at_max_chars_like_their_item(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    trace = tmp_path / "events.jsonl"
    client = await make_client(max_chars=40, debug_events_jsonl=trace)
    lines = lines_of(FIXTURES / "stream-json" / "streaming-haiku.jsonl")  # a 112-char answer
    session = json.loads(lines[0])["session_id"]
    await post(client, lines[:1], "stream-json")
    stream = await client.get(
        f"/workspace/{WS_ID}/session/stream", params={"session": session}, headers=AUTH
    )
    reader = SSEReader(stream)
    assert (await reader.event()).event == "hello"
    assert (await reader.event()).event == "snapshot"
    await post(client, lines[1:], "stream-json")
    deltas: list[Any] = []
    while (frame := await asyncio.wait_for(reader.event(), 5)).event != "assistant":
        if frame.event == "assistant_delta":
            deltas.append(frame.data)
    final = frame.data
    stream.close()
    # The streamed text is the item's cut text, the last delta saying it was cut; nothing after.
    assert final["truncated"] and final["full_length"] == 112
    assert "".join(d["text"] for d in deltas) == final["content"]
    assert len(final["content"]) <= 40 and final["content"].endswith("…")
    assert [d.get("truncated", False) for d in deltas] == [False] * (len(deltas) - 1) + [True]
    traced = [json.loads(line) for line in trace.read_text().splitlines()]
    traced_text = "".join(t["text"] for t in traced if t["event"] == "assistant_delta")
    assert traced_text == final["content"]
