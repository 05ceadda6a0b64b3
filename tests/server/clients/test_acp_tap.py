"""`sidemirror acp-tap`: a byte-exact stdio proxy that mirrors the session to the server."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import sidemirror
from sidemirror.core.store import workspace_id_for
from sidemirror.runtime_file import write_runtime_file

from tests.harness.auth import TOKEN
from tests.server.support import ClientFactory, state_of

AGENT = Path(__file__).parent.parent / "helpers" / "fake_acp_agent.py"
WORKSPACE = "/home/dev/tapped"
EDITOR_LINES = [
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}\n'
    % WORKSPACE.encode(),
    b'{"jsonrpc":"2.0", "id":2,"method":"session/prompt","params":{"sessionId":"sess-1",'
    b'"prompt":[{"type":"text","text":"list the files \xc3\xa9"}]}}\n',
]


async def run_editor(runtime_dir: Path, log_dir: Path) -> tuple[bytes, int]:
    """Talk to the tap like an editor: send each request, read until its response."""
    env = {**os.environ, "PYTHONPATH": str(Path(sidemirror.__file__).parent.parent)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sidemirror",
        "acp-tap",
        "--runtime-dir",
        str(runtime_dir),
        "--",
        sys.executable,
        str(AGENT),
        str(log_dir),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    received = b""
    for n, line in enumerate(EDITOR_LINES):
        proc.stdin.write(line)
        await proc.stdin.drain()
        while f'"id": {n},'.encode() not in received and f'"id":{n},'.encode() not in received:
            chunk = await asyncio.wait_for(proc.stdout.read(65536), 10)
            assert chunk, "tap closed its stdout early"
            received += chunk
    proc.stdin.close()
    received += await asyncio.wait_for(proc.stdout.read(), 10)
    return received, await asyncio.wait_for(proc.wait(), 10)


def assert_byte_identical(received: bytes, log_dir: Path) -> None:
    assert (log_dir / "agent_in").read_bytes() == b"".join(EDITOR_LINES)
    assert received == (log_dir / "agent_out").read_bytes()


async def test_tap_is_byte_exact_and_mirrors_the_session(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client = await make_client()
    runtime = tmp_path / "tap-run"
    assert client.port is not None
    write_runtime_file(runtime, {"port": client.port, "token": TOKEN, "pid": os.getpid()})
    log_dir = tmp_path / "agent"
    log_dir.mkdir()
    received, code = await run_editor(runtime, log_dir)
    assert code == 0
    assert_byte_identical(received, log_dir)
    store = state_of(client).store
    ws: Any = None
    for _ in range(100):
        ws = store.workspace(workspace_id_for(WORKSPACE))
        log = ws.sessions.get("sess-1") if ws is not None else None
        if log is not None and log.items and log.items[-1].type == "turn_complete":
            break
        await asyncio.sleep(0.05)
    items = ws.sessions["sess-1"].items
    assert [i.type for i in items] == [
        "user",
        "tool_use",
        "tool_result",
        "assistant",
        "turn_complete",
    ]
    assert items[0].content == "list the files é"
    assert (items[1].input, items[2].output) == ("ls -la", "a.ts\nb.ts")
    assert items[3].content == "Hello wörld 😀 done."
    assert (items[4].status, items[4].model) == ("ok", "claude-sonnet-4-5")


async def test_tap_proxies_perfectly_without_a_server(tmp_path: Path) -> None:
    log_dir = tmp_path / "agent"
    log_dir.mkdir()
    received, code = await run_editor(tmp_path / "no-server", log_dir)
    assert code == 0
    assert_byte_identical(received, log_dir)
