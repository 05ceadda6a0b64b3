"""SSE clients that mirror a stream exactly, and the recorded sessions the suite replays.

The server they read is tests/harness/server.py's; everything is loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.harness.auth import AUTH, TOKEN
from tests.harness.paths import FIXTURES, ROOT
from tests.harness.server import Server

CLAUDE_FIX = FIXTURES / "claude"
LONG_SESSION = CLAUDE_FIX / "sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
MID_SESSION = CLAUDE_FIX / "sample-project" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"


def sse_frames(buf: bytes) -> tuple[list[tuple[str | None, str | None, str]], bytes]:
    """The whole SSE messages in `buf` as (event, id, data), and the unfinished rest."""
    *raws, rest = buf.split(b"\n\n")
    out = []
    for raw in raws:
        event = fid = None
        data: list[str] = []
        for line in raw.decode("utf-8").split("\n"):
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                event = value
            elif key == "id":
                fid = value
            elif key == "data":
                data.append(value)
        if data:
            out.append((event, fid, "\n".join(data)))
    return out, rest


def canon(item: dict[str, Any]) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def seq_of(item_id: str) -> tuple[str, int]:
    epoch, _, seq = item_id.rpartition(".")
    return epoch, int(seq)


@dataclass
class Mirror:
    """An SSE client holding an exact copy of one session's log, resuming by its last id.

    It counts what a user would notice: items received twice (`duplicates`), a hole in the
    sequence or an item out of order (`gaps`), and protocol resets (`resets`). Ingested logs
    and activity number their items 1, 2, 3… (`dense`), so a hole shows at once; a transcript
    numbers them by byte position, so there a hole shows as an item missing from the final
    comparison with a fresh snapshot (`converged`), and `gaps` counts order breaks.
    """

    server: Server
    path: str  # /workspace/{id}/session/stream?session=...
    name: str = "client"
    dense: bool = False
    items: list[dict[str, Any]] = field(default_factory=list)
    last_id: str | None = None
    duplicates: int = 0
    gaps: int = 0
    resets: int = 0
    connects: int = 0
    frames: int = 0
    latencies: list[float] = field(default_factory=list)
    stalled: bool = False
    error: str | None = None
    reset_log: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        return [i["id"] for i in self.items]

    def _on_frame(self, event: str | None, fid: str | None, data: str) -> None:
        self.frames += 1
        if event in (None, "hello", "session_status", "ping"):
            return
        payload = json.loads(data)
        if event == "reset":
            self.resets += 1
            self.reset_log.append(
                f"{payload.get('reason')} last={self.last_id} now={payload.get('epoch')}"
            )
            return
        if event == "gap":  # activity stream: entries evicted, or an unknown cursor (reset)
            if payload.get("reset"):
                self.resets += 1
                self.items = []
            else:
                self.gaps += int(payload.get("missed", 0))
            return
        if event == "snapshot":
            assert len(payload["items"]) == payload["total"], "snapshot limit too small"
            self.items = list(payload["items"])
            self.last_id = payload["cursor"]
            return
        if fid is None:
            return  # live-only partials (assistant_delta) carry no id
        assert payload["id"] == fid, (payload, fid)
        if fid in self.ids():
            self.duplicates += 1
            return
        if self.items:
            epoch, seq = seq_of(self.items[-1]["id"])
            new_epoch, new_seq = seq_of(fid)
            if new_epoch != epoch or new_seq <= seq or (self.dense and new_seq != seq + 1):
                self.gaps += 1
        elif self.dense and seq_of(fid)[1] != 1:
            self.gaps += 1
        self.items.append(payload)
        self.last_id = fid
        content = payload.get("content")
        if isinstance(content, str) and content.startswith("load "):
            self.latencies.append(time.time() - float(content.rsplit(" ", 1)[1]))

    async def run(self, stop: asyncio.Event, *, reconnect_delay: float = 0.1) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=2, sock_read=None)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while not stop.is_set():
                headers = dict(AUTH)
                if self.last_id:
                    headers["Last-Event-ID"] = self.last_id
                try:
                    async with http.get(self.server.url(self.path), headers=headers) as resp:
                        if resp.status != 200:
                            raise aiohttp.ClientError(f"status {resp.status}")
                        self.connects += 1
                        await self._read(resp, stop)
                except (TimeoutError, aiohttp.ClientError, OSError):
                    pass
                if not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), reconnect_delay)

    async def _read(self, resp: aiohttp.ClientResponse, stop: asyncio.Event) -> None:
        buf = b""
        while not stop.is_set():
            if self.stalled:
                await asyncio.sleep(0.05)
                continue
            read = asyncio.ensure_future(resp.content.readany())
            stopper = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({read, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if read not in done:
                read.cancel()
                return
            chunk = read.result()
            if not chunk:
                return
            got, buf = sse_frames(buf + chunk)
            for event, fid, data in got:
                self._on_frame(event, fid, data)


def check_mirrors(mirrors: list[Mirror], fresh: list[dict[str, Any]]) -> dict[str, int]:
    """Every mirror holds exactly the fresh snapshot: returns loss/duplicate/gap totals."""
    want = [canon(i) for i in fresh]
    lost = dup = gaps = 0
    for m in mirrors:
        got = [canon(i) for i in m.items]
        lost += len(set(want) - set(got))
        dup += m.duplicates + (len(got) - len(set(got)))
        gaps += m.gaps
    return {"lost": lost, "duplicates": dup, "gaps": gaps}


def mirrors_converged(mirrors: list[Mirror], fresh: list[dict[str, Any]]) -> bool:
    want = [canon(i) for i in fresh]
    return all([canon(i) for i in m.items] == want for m in mirrors)


def claude_project(server: Server, name: str = "-path-to-Demo") -> Path:
    project = server.claude / name
    project.mkdir(parents=True, exist_ok=True)
    return project


def fixture_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


class LoadClients:
    """`clients` SSE readers of one stream in a process of their own (load_clients.py)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def summary(self, total: int, within: float) -> dict[str, Any]:
        """Tell them the session will hold `total` items; their JSON summary once every
        reader has them all."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"TOTAL {total}\n".encode())
        await self.proc.stdin.drain()
        result: dict[str, Any] = json.loads(
            await asyncio.wait_for(self.proc.stdout.readline(), within)
        )
        return result


@contextlib.asynccontextmanager
async def load_clients(
    server: Server, path: str, clients: int, ready_within: float = 60
) -> AsyncIterator[LoadClients]:
    """`clients` readers of `path`, started and subscribed; killed when the block ends."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.reliability.load_clients", str(server.port), path,
        str(clients), cwd=ROOT, env={**os.environ, "SIDEMIRROR_TOKEN": TOKEN,
        "PYTHONPATH": f"{ROOT}:{ROOT / 'server'}"},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ready = await asyncio.wait_for(proc.stdout.readline(), ready_within)
        assert ready.strip() == b"READY", ready
        yield LoadClients(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
