"""A server on a real loopback socket with a recorded Claude Code session, a runtime file that
points `sidemirror hook` (a real process) at it, and the recorded hook events to replay."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from sidemirror.core.store import workspace_id_for
from sidemirror.runtime_file import write_runtime_file
from sidemirror.web.identify import SERVER_ID

from tests.harness.auth import AUTH, TOKEN
from tests.harness.paths import FIXTURES
from tests.harness.waiting import until
from tests.server.support import ClientFactory

SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
CWD = "/path/to/Demo"
WS = workspace_id_for(CWD)
TRANSCRIPT = FIXTURES / "claude" / "sample-project" / f"{SESSION}.jsonl"
SIDEMIRROR = Path(sys.executable).with_name("sidemirror")
# Codex: its recorded rollout, and hook events shaped as Codex documents them for that session.
CODEX_SESSION = "019e1695-0522-7c83-8b39-0dd379793f80"
CODEX_WS = workspace_id_for("/Users/Sample_User/naya")
CODEX_ROLLOUT = FIXTURES / "codex" / f"rollout-2026-05-11T13-28-45-{CODEX_SESSION}.jsonl"
CODEX_EVENTS = "codex-permission-request.jsonl"


def events(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / "hooks" / name).read_text().splitlines()
    return [json.loads(line) for line in lines]


def event(name: str, fixture: str = "permission-request.jsonl") -> dict[str, Any]:
    found = [e for e in events(fixture) if e["hook_event_name"] == name]
    return found[0]


@dataclass
class HookServer:
    client: TestClient[Any, Any]
    runtime_dir: Path
    transcript: Path

    async def start_hook(
        self, payload: dict[str, Any], agent: str = "claude"
    ) -> asyncio.subprocess.Process:
        """The real hook command, as the agent runs it (`--agent codex` for Codex)."""
        proc = await asyncio.create_subprocess_exec(
            str(SIDEMIRROR),
            "hook",
            "--runtime-dir",
            str(self.runtime_dir),
            *(["--agent", agent] if agent != "claude" else []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        await proc.stdin.drain()
        proc.stdin.close()
        return proc

    async def hook(self, payload: dict[str, Any], agent: str = "claude") -> tuple[int, str]:
        proc = await self.start_hook(payload, agent)
        return await finish(proc)

    async def get(self, path: str) -> Any:
        resp = await self.client.get(path, headers=AUTH)
        assert resp.status == 200, await resp.text()
        return await resp.json()

    async def session_state(self, session: str = SESSION) -> tuple[str, str | None] | None:
        row = await self.session_row(session)
        return None if row is None else (row["state"], row["reason"])

    async def session_row(self, session: str = SESSION) -> dict[str, Any] | None:
        rows = (await self.get("/api/attention"))["sessions"]
        return next((r for r in rows if r["session"] == session), None)


async def finish(proc: asyncio.subprocess.Process, timeout: float = 30) -> tuple[int, str]:
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def hook_server(make_client: ClientFactory, tmp_path: Path, **overrides: Any) -> HookServer:
    projects = tmp_path / "claude-projects"
    transcript = projects / "-path-to-Demo" / TRANSCRIPT.name
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(TRANSCRIPT, transcript)
    client = await make_client(claude_dirs=[projects], **overrides)
    return await _serving(client, tmp_path, transcript, WS)


async def codex_hook_server(make_client: ClientFactory, tmp_path: Path) -> HookServer:
    """The same, with the recorded Codex rollout in a Codex home: hooks for `CODEX_SESSION`."""
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    rollout = day / CODEX_ROLLOUT.name
    shutil.copyfile(CODEX_ROLLOUT, rollout)
    client = await make_client(codex_dir=tmp_path / "codex")
    return await _serving(client, tmp_path, rollout, CODEX_WS)


async def _serving(
    client: TestClient[Any, Any], tmp_path: Path, transcript: Path, workspace: str
) -> HookServer:
    runtime_dir = tmp_path / "hook-run"
    # As the server writes it: this process's pid, start time and boot id, and its server_id,
    # which the hook checks before it sends anything (server_check.py).
    server_id = client.server.app[SERVER_ID]
    write_runtime_file(runtime_dir, {"port": client.port, "token": TOKEN, "server_id": server_id})
    server = HookServer(client, runtime_dir, transcript)

    async def listed() -> bool:
        resp = await client.get(f"/workspace/{workspace}/sessions", headers=AUTH)
        return resp.status == 200 and bool((await resp.json())["sessions"])

    await until(listed)
    return server
