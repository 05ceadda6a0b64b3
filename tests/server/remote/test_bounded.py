"""Forwarded hosts cost a bounded amount: at most `--max-hosts` of them, one inotify instance for
all their mirrors, and mirror folders private (0700) whatever the umask."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import aiohttp

from tests.harness.auth import AUTH
from tests.server.remote.support import ForwardConnect
from tests.server.support import ClientFactory

LINE = b'{"type":"user","cwd":"/home/dev/app","sessionId":"s1","message":{"content":"hi"}}\n'


def _inotify_instances() -> int:
    """This process's inotify instances: what counts against the user's
    fs.inotify.max_user_instances."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify":
                count += 1
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
    return count


async def _say_hello(ws: aiohttp.ClientWebSocketResponse, label: str) -> dict[str, Any]:
    await ws.send_str(json.dumps({"type": "hello", "label": label, "version": 1}))
    answer: dict[str, Any] = await ws.receive_json()
    return answer


async def test_a_new_host_past_max_hosts_is_refused_with_the_reason(
    make_client: ClientFactory, forward_ws: ForwardConnect
) -> None:
    await make_client(max_hosts=2)
    for label in ("one", "two"):
        async with forward_ws() as ws:
            assert (await _say_hello(ws, label))["type"] == "welcome"
    async with forward_ws() as ws:
        refused = await _say_hello(ws, "three")
        assert refused["type"] == "error"
        assert "at most 2 forwarded hosts" in refused["error"] and "--max-hosts" in refused["error"]
        closed = await ws.receive()
        assert closed.type == aiohttp.WSMsgType.CLOSE and closed.data == 4400
    async with forward_ws() as ws:  # a host already mirrored is still welcome
        assert (await _say_hello(ws, "one"))["type"] == "welcome"


async def test_150_hosts_spend_one_inotify_instance_and_still_read_their_files(
    make_client: ClientFactory, forward_ws: ForwardConnect
) -> None:
    client = await make_client(max_hosts=150)
    before = _inotify_instances()
    async with forward_ws() as ws:
        pass  # the connection alone
    for n in range(150):
        async with forward_ws() as ws:
            assert (await _say_hello(ws, f"host{n}"))["type"] == "welcome"
    # One watcher for every mirror (it may have opened before the first hello): not two a host.
    assert _inotify_instances() - before <= 1
    # ... and the shared watcher still feeds each host's sources: a file sent now is read.
    async with forward_ws() as ws:
        await _say_hello(ws, "host149")
        await ws.send_bytes(b'{"file": "claude/-home-dev-app/s1.jsonl", "offset": 0}\n' + LINE)
        assert (await ws.receive_json())["type"] == "ack"
    for _ in range(500):
        listing = await (await client.get("/api/workspaces", headers=AUTH)).json()
        if listing["workspaces"]:
            break
        await asyncio.sleep(0.02)
    assert [w["directory"] for w in listing["workspaces"]] == ["host149:/home/dev/app"]


async def test_mirror_folders_are_0700_under_umask_0(
    make_client: ClientFactory, forward_ws: ForwardConnect, tmp_path: Path
) -> None:
    await make_client()
    old = os.umask(0)
    try:
        async with forward_ws() as ws:
            await _say_hello(ws, "devbox")
            key = "claude/-home-dev-app/s1/subagents/agent-a.jsonl"
            await ws.send_bytes(json.dumps({"file": key, "offset": 0}).encode() + b"\n" + LINE)
            assert (await ws.receive_json())["type"] == "ack"
    finally:
        os.umask(old)
    remote = tmp_path / "data" / "remote"
    folders = [remote, *(p for p in remote.rglob("*") if p.is_dir())]
    assert len(folders) >= 5  # remote/devbox/claude/<project>/s1/subagents
    loose = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in folders}
    assert {p: m for p, m in loose.items() if m != "0o700"} == {}
