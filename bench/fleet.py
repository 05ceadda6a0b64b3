"""A fleet at once (issue 34): 20 live sessions appended together, a few of them followed.

Twenty sessions, Claude Code transcripts (`synth.LineFactory`, from the sample-project fixture)
and Codex rollouts (`CodexLines`, from the rollout in tests/fixtures/codex), both made by
tests/harness/agent_lines.py (imported through synth), each in its own project directory, are
appended at 20 lines/s each (400 lines/s in all; each interval 25–75 ms) for `--fleet-seconds`.
Three SSE clients follow three of them (two Claude, one Codex) and the attention stream is open,
as a user watching a fleet would have it; one real side panel (bench/fleet_pixel.py) shows the
first followed session, with the Sessions view open in a second tab. Recorded: write→pixel
p50/p95 in that panel; append→SSE p50/p99 per followed session (markers `BMK<n>Z`,
n = session × 100,000 + line); the server's CPU % of one core over the run; its RSS and open
descriptors at start, middle and end.

vibedeck gets the same Claude load (it reads no Codex rollouts; their appends still run, so the
machine is as busy; no browser: vibedeck has no side panel): three clients on its one `/events`
stream, each figure from the markers of one followed session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import client
import fleet_pixel
import peers
import psutil
import pyspy
import synth  # first: it puts the repository on sys.path

from tests.harness.agent_lines import CodexLines, seed_codex

SESSIONS = 20
CODEX_EVERY = 3  # every third session is a Codex rollout (7 of 20), the rest Claude Code
RATE = 20.0  # lines per second per session
STRIDE = 100_000  # marker n = session * STRIDE + line
# Each interval 25–75 ms (client.Appender): lines meet the panel's frames at every phase, as an
# agent's writes do, instead of at one (50 ms is exactly three 60 Hz frames).
JITTER = 0.5
PROBES = ("start", "middle", "end")
# Every followed line's write time and first sighting (`time.monotonic()`, s), per stream, to
# FILE.<tool>.json.
RAW = "BENCH_FLEET_RAW"


def _stream_name(fleet: list[dict[str, Any]], i: int) -> str:
    """A followed session's name in the results: "claude-00"."""
    return f"{fleet[i]['kind']}-{i:02d}"


def seed_sessions(home: Path) -> list[dict[str, Any]]:
    """The fleet's files, seeded with their history: kind, id, cwd, path, line maker."""
    out = []
    for i in range(SESSIONS):
        cwd = f"/home/bench/fleet/agent-{i:02d}"
        sid = str(uuid.UUID(int=0x5E551000_0000_4000_8000_000000F1EE00 + i))
        if i % CODEX_EVERY == 1:
            path = seed_codex(home / ".codex", sid, cwd)
            make: Callable[[int], bytes] = CodexLines().line
            kind = "codex"
        else:
            path = home / ".claude/projects" / cwd.replace("/", "-") / f"{sid}.jsonl"
            synth.seed_session(path, sid, cwd)
            make = synth.LineFactory(sid, cwd).line
            kind = "claude"
        out.append({"kind": kind, "id": sid, "cwd": cwd, "path": path, "make": make})
    return out


def _probe(pid: int) -> dict[str, float]:
    """RSS (MB) and open descriptors of the server process (its children included for RSS)."""
    sampler = client.RssSampler(pid)
    try:
        fds = psutil.Process(pid).num_fds()
    except psutil.Error:
        fds = -1
    return {"rss_mb": round(sampler.rss() / 2**20, 1), "open_fds": fds}


async def stream_urls(run: peers.Running, followed: list[dict[str, Any]]) -> list[str]:
    """Stream URLs of the followed sessions, once every workspace of the fleet is listed."""
    deadline = time.monotonic() + 120
    async with aiohttp.ClientSession() as s:
        while time.monotonic() < deadline:
            async with s.get(run.base + "/api/workspaces", headers=peers.AUTH) as r:
                listed = {w["directory"]: w["id"] for w in (await r.json())["workspaces"]}
            if all(f["cwd"] in listed for f in followed) and len(listed) >= SESSIONS:
                q = "/workspace/{}/session/stream?session={}"
                return [run.base + q.format(listed[f["cwd"]], f["id"]) for f in followed]
            await asyncio.sleep(0.2)
    raise RuntimeError(f"the fleet's workspaces were not all listed in 120 s: {sorted(listed)}")


async def _run(
    name: str, start: Any, root: Path, seconds: float, log: Any, profile: Path | None = None
) -> dict[str, Any]:
    home = root / f"fleet-{name}" / "home"
    (home / ".claude/projects").mkdir(parents=True)
    fleet = seed_sessions(home)
    claude = [i for i, f in enumerate(fleet) if f["kind"] == "claude"]
    codex = [i for i, f in enumerate(fleet) if f["kind"] == "codex"]
    follow = [claude[0], claude[1], codex[0]] if name == "sidemirror" else claude[:3]
    out: dict[str, Any] = {"sessions": SESSIONS, "codex_sessions": len(codex), "seconds": seconds}
    with start(home) as run:
        try:
            await peers.wait_http(run.base + "/health", run.proc, 120)
            if name == "sidemirror":
                urls = await stream_urls(run, [fleet[i] for i in follow])
                watchers = [client.SseWatcher(u, peers.AUTH, b"event: snapshot") for u in urls]
                attention = client.SseWatcher(
                    run.base + "/api/attention/stream", peers.AUTH, b"\n\n"
                )
            else:
                events = run.base + "/events"
                watchers = [client.SseWatcher(events, {}, b"catchup_complete") for _ in follow]
                attention = None
        except Exception as exc:  # a tool that cannot run here: say why, carry on
            return {"error": f"{exc}", "log": peers.tail_log(run.log)}
        stop = asyncio.Event()
        conn = aiohttp.TCPConnector(limit=0)
        async with (
            aiohttp.ClientSession(connector=conn) as session,
            contextlib.AsyncExitStack() as browser,
        ):
            streams = [*watchers, *([attention] if attention else [])]
            tasks, error = await client.start_watchers(session, streams, stop, 120)
            if error:
                return {**out, "error": error}
            shown = None  # the side panel on the first followed session (ours only)
            if name == "sidemirror":
                out["pixel"] = {"session": f"claude-{follow[0]:02d}"}
                try:
                    panel = fleet_pixel.panel(root / f"fleet-{name}", run, fleet[follow[0]]["id"])
                    shown = await browser.enter_async_context(panel)
                except Exception as exc:  # the fleet's other figures still stand without it
                    out["pixel"]["error"] = f"{type(exc).__name__}: {exc}"
            count = int(RATE * seconds)
            apps = [
                client.Appender(
                    f["path"], f["make"], count, 1 / RATE, first=i * STRIDE, jitter=JITTER
                )
                for i, f in enumerate(fleet)
            ]
            pid = run.proc.pid
            out["start"] = _probe(pid)
            m0 = client.main_thread_cpu_seconds(pid)
            c0, w0 = client.cpu_seconds(pid), time.monotonic()
            for app in apps:
                app.start()
            # The middle of the run (py-spy costs the server some CPU of its own).
            spy = pyspy.Profile(pid, profile, seconds / 2) if name == "sidemirror" else None
            while any(a.is_alive() for a in apps) and time.monotonic() - w0 < seconds + 60:
                if "middle" not in out and time.monotonic() - w0 >= seconds / 2:
                    out["middle"] = _probe(pid)
                await asyncio.sleep(0.1)
            for app in apps:
                app.stop_flag.set()
            w1, c1 = time.monotonic(), client.cpu_seconds(pid)
            m1 = client.main_thread_cpu_seconds(pid)
            if spy is not None:
                spy.finish()
            out["end"] = _probe(pid)
            deadline = time.monotonic() + 15  # late events, bounded
            while time.monotonic() < deadline and any(
                len(w.seen.first) < len(apps[i].sent) for w, i in zip(watchers, follow, strict=True)
            ):
                await asyncio.sleep(0.05)
            if shown is not None:
                app, seen = apps[follow[0]], watchers[0].seen.first
                sse = {n: seen[n] - t for n, t in app.sent.items() if n in seen}
                try:
                    out["pixel"].update(await shown.painted(app.wall, 15, sse))
                except Exception as exc:  # a browser that died during the run
                    out["pixel"]["error"] = f"{type(exc).__name__}: {exc}"
            stop.set()
            for t in tasks:
                t.cancel()
    written = sum(len(a.sent) for a in apps)
    out["lines_written"] = written
    out["written_per_s"] = round(written / (w1 - w0), 1)
    out["server_cpu_percent"] = round(100 * (c1 - c0) / (w1 - w0), 1)
    # Where it went: the event loop's thread, and the rest (our search writer, reader threads).
    out["main_thread_cpu_percent"] = round(100 * (m1 - m0) / (w1 - w0), 1)
    out["loadavg_1m"] = round(os.getloadavg()[0], 2)
    followed = {}
    for w, i in zip(watchers, follow, strict=True):
        sent = apps[i].sent
        lat = [w.seen.first[n] - t for n, t in sent.items() if n in w.seen.first]
        followed[_stream_name(fleet, i)] = {
            **client.summary_ms(lat, len(sent)),
            "resets": w.resets,
        }
    out["followed"] = followed
    if raw := os.environ.get(RAW):  # for a closer look at one run: when each tail happened
        streams = {
            _stream_name(fleet, i): {n: [t, w.seen.first.get(n)] for n, t in apps[i].sent.items()}
            for w, i in zip(watchers, follow, strict=True)
        }
        Path(raw).with_suffix(f".{name}.json").write_text(json.dumps(streams))
    log(f"  fleet {name}: {out}")
    return out


async def fleet(
    root: Path, seconds: float, skip: list[str], log: Any, profile: Path | None = None
) -> dict[str, Any]:
    """The fleet against us, then vibedeck; `profile`: a py-spy file of our server."""
    res: dict[str, Any] = {
        "sidemirror": await _run("sidemirror", peers.start_ours, root, seconds, log, profile)
    }
    if "vibedeck" in skip:
        return res
    if not peers.PEER_DIRS["vibedeck"].exists():
        res["vibedeck"] = {"error": f"not installed ({peers.PEER_DIRS['vibedeck']})"}
        return res
    res["vibedeck"] = await _run("vibedeck", peers.start_vibedeck, root, seconds, log)
    return res


def rows(res: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The results table's lines for the fleet phase, per tool."""
    out: list[tuple[str, str]] = []
    for name, r in (res or {}).items():
        if "error" in r:
            out.append((f"fleet, {name}", "error: " + r["error"][:60]))
            continue
        for key, f in r["followed"].items():
            value = f"{f['p50_ms']} / {f['p99_ms']} ms (missed {f['missed']})"
            out.append((f"fleet, {name}: {key} append→SSE p50 / p99", value))
        marks = " / ".join(f"{r[k]['rss_mb']} MB, {r[k]['open_fds']} fds" for k in PROBES if k in r)
        out.extend(fleet_pixel.rows(name, r))
        cpu = f"{r['server_cpu_percent']} %"
        if "main_thread_cpu_percent" in r:
            cpu += f" (main thread {r['main_thread_cpu_percent']} %)"
        out.append((f"fleet, {name}: CPU of one core", cpu))
        out.append((f"fleet, {name}: RSS, open fds at start / middle / end", marks))
    return out
