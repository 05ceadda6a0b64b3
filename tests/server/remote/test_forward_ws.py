"""`/api/forward/ws`: the mirror takes a host's bytes at their offsets, skips what it has, refuses
gaps, and refuses anything that could write outside the host's folder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from tests.harness.auth import AUTH
from tests.server.remote.support import ForwardConnect
from tests.server.support import ClientFactory

KEY = "claude/-home-dev-app/s1.jsonl"
LINE = b'{"type":"user","cwd":"/home/dev/app","sessionId":"s1","message":{"content":"hi"}}\n'


async def _hello(ws: aiohttp.ClientWebSocketResponse, label: str = "devbox") -> dict[str, Any]:
    await ws.send_str(json.dumps({"type": "hello", "label": label, "version": 1}))
    answer: dict[str, Any] = await ws.receive_json()
    return answer


async def _frame(ws: aiohttp.ClientWebSocketResponse, header: dict[str, Any], data: bytes) -> Any:
    await ws.send_bytes(json.dumps(header).encode() + b"\n" + data)
    return await ws.receive_json()


def _mirror(client: TestClient[Any, Any], tmp_path: Path) -> Path:
    return tmp_path / "data" / "remote" / "devbox" / KEY


async def test_bytes_land_at_their_offsets_once(
    make_client: ClientFactory, forward_ws: ForwardConnect, tmp_path: Path
) -> None:
    client = await make_client()
    async with forward_ws() as ws:
        assert await _hello(ws) == {"type": "welcome", "offsets": {}}
        assert await _frame(ws, {"file": KEY, "offset": 0}, LINE) == {
            "type": "ack", "file": KEY, "size": len(LINE),
        }  # fmt: skip
        # Sent again (an ack lost with a connection): only the new tail is written.
        again = await _frame(ws, {"file": KEY, "offset": 0}, LINE + LINE)
        assert again["size"] == 2 * len(LINE)
        # A gap is not written; the ack says where to resume.
        gap = await _frame(ws, {"file": KEY, "offset": 10 * len(LINE)}, LINE)
        assert gap["size"] == 2 * len(LINE)
    assert _mirror(client, tmp_path).read_bytes() == LINE + LINE
    async with forward_ws() as ws:
        assert (await _hello(ws))["offsets"] == {KEY: 2 * len(LINE)}
        truncated = await _frame(ws, {"file": KEY, "truncate": 0}, b"")
        assert truncated["size"] == 0


@pytest.mark.parametrize(
    "key",
    [
        "claude/../../escape.jsonl",
        "/etc/passwd.jsonl",
        "other/p/s.jsonl",
        "claude/p/s.txt",
        "claude/p/./s.jsonl",
        "claude/p\\..\\s.jsonl",
        "claude/p//s.jsonl",
    ],
)
async def test_a_key_outside_the_hosts_folder_is_refused(
    make_client: ClientFactory, forward_ws: ForwardConnect, tmp_path: Path, key: str
) -> None:
    await make_client()
    async with forward_ws() as ws:
        await _hello(ws)
        answer = await _frame(ws, {"file": key, "offset": 0}, LINE)
        assert answer["type"] == "error" and "refusing file key" in answer["error"]
        closed = await ws.receive()
        assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 4400
    assert not list((tmp_path / "data").rglob("*.jsonl"))
    assert not (tmp_path / "escape.jsonl").exists()


@pytest.mark.parametrize(
    "hello",
    [
        {"type": "hello", "label": "../x", "version": 1},
        {"type": "hello", "label": "", "version": 1},
        {"type": "hello", "label": "ok", "version": 2},
        {"type": "append"},
    ],
)
async def test_a_bad_hello_is_refused_with_a_reason(
    make_client: ClientFactory, forward_ws: ForwardConnect, hello: dict[str, Any]
) -> None:
    await make_client()
    async with forward_ws() as ws:
        await ws.send_str(json.dumps(hello))
        answer = await ws.receive_json()
        assert answer["type"] == "error" and answer["error"]


async def test_without_the_token_nothing_is_accepted(
    make_client: ClientFactory, forward_ws: ForwardConnect
) -> None:
    await make_client()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        async with forward_ws(headers={}):
            pass
    assert refused.value.status == 401


async def test_a_forwarded_file_becomes_a_host_labelled_workspace(
    make_client: ClientFactory,
    forward_ws: ForwardConnect,
) -> None:
    client = await make_client()
    async with forward_ws() as ws:
        await _hello(ws)
        await _frame(ws, {"file": KEY, "offset": 0}, LINE)
    for _ in range(200):
        listing = await (await client.get("/api/workspaces", headers=AUTH)).json()
        if listing["workspaces"]:
            break
        await asyncio.sleep(0.02)  # the source reads the mirror as it would a local file
    (ws_,) = listing["workspaces"]
    assert (ws_["directory"], ws_["name"]) == ("devbox:/home/dev/app", "devbox:app")


async def test_a_mirror_that_cannot_be_written_answers_an_error_and_keeps_what_it_had(
    make_client: ClientFactory, forward_ws: ForwardConnect, tmp_path: Path
) -> None:
    client = await make_client()
    async with forward_ws() as ws:
        await _hello(ws)
        await _frame(ws, {"file": KEY, "offset": 0}, LINE)
        project = _mirror(client, tmp_path).parent
        # A folder where the next file should be: the write fails as on a full or broken disk.
        (project / "s2.jsonl").mkdir()
        answer = await _frame(ws, {"file": KEY.replace("s1", "s2"), "offset": 0}, LINE)
        assert answer["type"] == "error" and "cannot write the mirror" in answer["error"]
    assert _mirror(client, tmp_path).read_bytes() == LINE


async def test_a_backlog_is_held_aside_until_its_last_frame(
    make_client: ClientFactory, forward_ws: ForwardConnect, tmp_path: Path
) -> None:
    client = await make_client()
    mirror = _mirror(client, tmp_path)
    part = mirror.with_name(mirror.name + ".part")
    async with forward_ws() as ws:
        await _hello(ws)
        first = await _frame(ws, {"file": KEY, "offset": 0, "more": True}, LINE)
        assert first["size"] == len(LINE)
        assert part.read_bytes() == LINE and not mirror.exists()
    # A forwarder killed mid-backlog resumes where the held-aside part ends.
    async with forward_ws() as ws:
        assert (await _hello(ws))["offsets"] == {KEY: len(LINE)}
        last = await _frame(ws, {"file": KEY, "offset": len(LINE), "more": False}, LINE)
        assert last["size"] == 2 * len(LINE)
    assert mirror.read_bytes() == LINE + LINE and not part.exists()
