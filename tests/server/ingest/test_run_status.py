"""A run's outcome: `POST /api/ingest` answers ok / failed / stopped, and `sidemirror ingest`
exits with its own status for each (0 / 1 / 3; 2 when no server answers)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import sidemirror
from sidemirror.core.store import workspace_id_for
from sidemirror.runtime_file import write_runtime_file

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.harness.paths import FIXTURES
from tests.server.support import ClientFactory

WORKSPACE = "/home/dev/project"
CASES = [  # fixture, format, status, exit
    ("acp/schema-kinds.jsonl", "acp", "stopped", 3),  # the last prompt: stopReason cancelled
    ("acp/multica-stored.jsonl", "acp", "failed", 1),  # an authentication error
    ("acp/tool-progress.jsonl", "acp", "ok", 0),
    ("stream-json/interrupt.jsonl", "stream-json", "stopped", 3),
]


async def post(client: Any, body: bytes, fmt: str) -> dict[str, Any]:
    resp = await client.post(
        "/api/ingest", params={"workspace": WORKSPACE, "format": fmt}, data=body, headers=NDJSON
    )
    assert resp.status == 200, await resp.text()
    result: dict[str, Any] = await resp.json()
    return result


@pytest.mark.parametrize(("name", "fmt", "status", "_exit"), CASES, ids=[c[0] for c in CASES])
async def test_the_answer_says_how_the_run_ended(
    make_client: ClientFactory, name: str, fmt: str, status: str, _exit: int
) -> None:
    client = await make_client()
    result = await post(client, (FIXTURES / name).read_bytes(), fmt)
    assert result["rejected"] == 0
    assert result["status"] == status


async def test_a_cancelled_acp_turn_shows_stopped(make_client: ClientFactory) -> None:
    client = await make_client()
    await post(client, (FIXTURES / "acp/schema-kinds.jsonl").read_bytes(), "acp")
    ws_id = workspace_id_for(WORKSPACE)
    resp = await client.get(
        f"/workspace/{ws_id}/session", params={"session": "sess_abc123def456"}, headers=AUTH
    )
    items = (await resp.json())["items"]
    turns = [(i["status"], i["stop_reason"]) for i in items if i["type"] == "turn_complete"]
    assert turns == [("ok", "end_turn"), ("stopped", "cancelled")]


async def ingest_cli(runtime: Path, body: bytes, fmt: str) -> tuple[int, bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(sidemirror.__file__).parent.parent)}
    args = ["ingest", "--runtime-dir", str(runtime), "--workspace", WORKSPACE, "--format", fmt]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sidemirror",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    _, err = await asyncio.wait_for(proc.communicate(body), 30)
    assert proc.returncode is not None
    return proc.returncode, err


async def client_and_runtime(make_client: ClientFactory, tmp_path: Path) -> tuple[Any, Path]:
    """A server and the runtime file the CLI finds it by."""
    client = await make_client()
    runtime = tmp_path / "cli-run"
    assert client.port is not None
    write_runtime_file(runtime, {"port": client.port, "token": TOKEN, "pid": os.getpid()})
    return client, runtime


@pytest.mark.parametrize(
    ("name", "fmt", "status", "code"),
    CASES[:2] + CASES[3:],
    ids=[c[0] for c in CASES[:2] + CASES[3:]],
)
async def test_the_cli_exits_with_the_runs_outcome(
    make_client: ClientFactory, tmp_path: Path, name: str, fmt: str, status: str, code: int
) -> None:
    client, runtime = await client_and_runtime(make_client, tmp_path)
    returncode, err = await ingest_cli(runtime, (FIXTURES / name).read_bytes(), fmt)
    assert f'"status": "{status}"'.encode() in err
    assert returncode == code


async def test_the_cli_exits_2_without_a_server(tmp_path: Path) -> None:
    returncode, err = await ingest_cli(tmp_path / "nothing", b"{}\n", "events")
    assert returncode == 2 and b"no server is running" in err


async def test_a_stream_json_run_cut_off_before_its_result_exits_3_stopped(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client, runtime = await client_and_runtime(make_client, tmp_path)
    lines = (FIXTURES / "stream-json/streaming-haiku.jsonl").read_bytes().splitlines(True)
    cut = b"".join(line for line in lines if b'"type":"result"' not in line.replace(b" ", b""))
    assert len(cut) < sum(map(len, lines))  # the run's `result` line is gone: it was killed
    returncode, err = await ingest_cli(runtime, cut, "stream-json")
    assert b'"status": "stopped"' in err and returncode == 3
    resp = await client.get(
        f"/workspace/{workspace_id_for(WORKSPACE)}/session",
        params={"session": "3432fc9d-d881-4866-9606-9fe0578d1ae1"},
        headers=AUTH,
    )
    items = (await resp.json())["items"]
    assert [i["status"] for i in items if i["type"] == "turn_complete"] == ["stopped"]
