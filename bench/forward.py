"""`sidemirror forward` over loopback: how fast another machine's files reach the local server,
and an append's latency through the forwarder, beside the same append made locally.

No peer forwards sessions from another machine; the local path of the same server, in the same
run, is the comparison.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import peers
import synth

BIG = "f0a7a7d0-0000-4000-8000-0000000000b1"
LIVE = "f0a7a7d0-0000-4000-8000-0000000000c2"
LOCAL = "f0a7a7d0-0000-4000-8000-0000000000d3"
LABEL = "benchbox"
PROJECT = synth.CWD.replace("/", "-")


async def forward(root: Path, mb: int, appends: int, rate: float) -> dict[str, Any]:
    home = root / "forward" / "home"
    (home / ".claude/projects").mkdir(parents=True)
    remote = root / "forward" / "remote"
    projects = remote / ".claude/projects"
    big = projects / PROJECT / f"{BIG}.jsonl"
    size = synth.write_transcript(big, BIG, mb << 20)
    live = projects / PROJECT / f"{LIVE}.jsonl"
    synth.seed_session(live, LIVE)
    local = home / ".claude/projects" / PROJECT / f"{LOCAL}.jsonl"
    synth.seed_session(local, LOCAL)
    token_file = remote / "token"
    token_file.write_text(peers.TOKEN)
    token_file.chmod(0o600)
    out: dict[str, Any] = {"transcript_mb": round(size / 2**20, 1)}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 60)
        mirror = home.parent / "sm-data" / "remote" / LABEL / "claude" / PROJECT / big.name
        t0 = time.monotonic()
        fwd = _start_forwarder(remote, run, projects)
        try:
            await _until(lambda: mirror.exists() and mirror.stat().st_size == size, 300)
            mirrored = time.monotonic() - t0
            ws_id = await _until_async(lambda: _workspace_id(run, f"{LABEL}:{synth.CWD}"), 60)
            await _until_async(lambda: _snapshot_has_items(run, ws_id, BIG), 300)
            shown = time.monotonic() - t0
            out["mirrored_s"] = round(mirrored, 2)
            out["mirrored_mb_per_s"] = round(size / 2**20 / mirrored, 1)
            out["snapshot_answered_s"] = round(shown, 2)
            out["to_panel_mb_per_s"] = round(size / 2**20 / shown, 1)
            local_ws = await _until_async(lambda: _workspace_id(run, synth.CWD), 60)
            out["append_forwarded"] = await _latency(run, ws_id, live, LIVE, appends, rate)
            out["append_local"] = await _latency(run, local_ws, local, LOCAL, appends, rate)
        finally:
            peers.stop(fwd)
    return out


def _start_forwarder(remote: Path, run: peers.Running, projects: Path) -> subprocess.Popen[bytes]:
    argv = [
        str(peers.BENCH / "venv/bin/python"), "-m", "sidemirror", "forward",
        "--to", run.base, "--token-file", str(remote / "token"), "--label", LABEL,
        "--claude-dir", str(projects), "--codex-dir", str(remote / ".codex"),
    ]  # fmt: skip
    proc, _log = peers._spawn("forward", argv, remote)
    return proc


async def _latency(
    run: peers.Running, ws_id: str, path: Path, session: str, appends: int, rate: float
) -> dict[str, Any]:
    url = f"{run.base}/workspace/{ws_id}/session/stream?session={session}"
    watcher = client.SseWatcher(url, peers.AUTH, b"event: snapshot")
    stop = asyncio.Event()
    factory = synth.LineFactory(session)
    async with aiohttp.ClientSession() as http:
        task = asyncio.create_task(watcher.run(http, stop))
        await asyncio.wait_for(watcher.ready.wait(), 60)
        await asyncio.sleep(1.0)  # the same settle time as the latency phase
        app = client.Appender(path, factory.line, appends, 1 / rate)
        app.start()
        wanted = set(range(appends))
        deadline = time.monotonic() + appends / rate + 30
        while time.monotonic() < deadline and not wanted <= watcher.seen.first.keys():
            await asyncio.sleep(0.05)
        app.stop_flag.set()
        stop.set()
        task.cancel()
    lat = [watcher.seen.first[n] - t for n, t in app.sent.items() if n in watcher.seen.first]
    summary = client.summary_ms(lat, len(app.sent))
    summary["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return summary


async def _workspace_id(run: peers.Running, directory: str) -> str | None:
    url = run.base + "/api/workspaces"
    async with aiohttp.ClientSession() as s, s.get(url, headers=peers.AUTH) as r:
        data = await r.json()
    return next((w["id"] for w in data["workspaces"] if w["directory"] == directory), None)


async def _snapshot_has_items(run: peers.Running, ws_id: str, session: str) -> bool:
    url = f"{run.base}/workspace/{ws_id}/session?session={session}&limit=1"
    async with aiohttp.ClientSession() as s, s.get(url, headers=peers.AUTH) as r:
        return r.status == 200 and bool((await r.json()).get("items"))


async def _until(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("forward bench: timed out")
        await asyncio.sleep(0.01)


async def _until_async(probe: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("forward bench: timed out")
        await asyncio.sleep(0.01)


def rows(result: dict[str, Any] | None, blank: list[str]) -> list[str]:
    """The table's lines for this phase (no peer forwards: its cells stay blank)."""
    return client.phase_rows("forward", result, blank, _cells)


def _cells(result: dict[str, Any]) -> list[tuple[str, str]]:
    mb = result["transcript_mb"]
    fwd, loc = result["append_forwarded"], result["append_local"]
    return [
        (f"forward {mb} MB: mirrored (MB/s)", f"{result['mirrored_mb_per_s']} MB/s"),
        (f"forward {mb} MB: answered in a snapshot", f"{result['snapshot_answered_s']} s"),
        (
            "forward: append → SSE p50 / p90 (local file, same run)",
            f"{fwd['p50_ms']} / {fwd['p90_ms']} ms ({loc['p50_ms']} / {loc['p90_ms']} ms)",
        ),
    ]
