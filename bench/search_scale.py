"""Search at scale (issue 16): the full-text index of a big archive, built in the background.

An archive of real transcript content (each session the fixture transcript repeated with its
own uuids, `synth.write_transcript`, or a prefix of it when sessions are smaller than it,
`synth.write_archive`; `sessions / 20` project folders; mtimes over 30 days), built once under
`.bench/data`; then our server on a fresh data dir:
- **build**: time until `/health` says the index holds every session, the server's cores over
  that time, its RSS growth (peak − at first `/health`), the index file's size;
- **append→searchable during the build**: a real line with a fresh marker appended to a live
  session every `APPEND_EVERY_S` while the index fills, `/api/search?q=<marker>` polled every
  10 ms until it answers the hit (p50 / max);
- **queries** once built: per word (rare and common words of the fixture's text, a phrase, a
  prefix), `ROUNDS` queries each (p50 / p95, and the hits answered);
- **append→searchable after the build**, and **idle CPU** once the index is complete.

    .bench/venv/bin/python bench/run.py --only search [--full]  # 100 MB / 100; 2 GB / 1,000
    .bench/venv/bin/python bench/search_scale.py --mb 2048 --sessions 1000 [--profile F]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import signal
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import client  # noqa: E402
import peers  # noqa: E402
import pyspy  # noqa: E402
import synth  # noqa: E402
from review import rss_kb  # noqa: E402
from review import timed_get as _get  # noqa: E402

LIVE = "5e551000-0000-4000-8000-0000005ea4c8"
# Words of the fixture's text: rare ones (a few items per session) to common ones (most items).
QUERIES = [
    "orchestrator",
    "localStorage",
    '"Next.js"',
    "Tailwind",
    "test*",
    "component",
    "file",
    "the",
]
ROUNDS = 10
_FIXTURE_DAY = b'"timestamp":"2025-09-03T0'  # every line of the fixture is of that night
APPEND_EVERY_S = 1.0
POLL_S = 0.01


def build_archive(data: Path, mb: int, sessions: int) -> tuple[Path, dict[str, Any]]:
    """The archive's HOME (kept under .bench/data between runs) and what it holds."""
    base = data / f"search-{sessions}s-{mb}mb-days"
    stamp = base / "meta.json"
    if stamp.exists():
        return base / "home", json.loads(stamp.read_text())
    projects = base / "home/.claude/projects"
    workspaces = max(1, sessions // 20)
    per = (mb << 20) // sessions
    if per < synth.FIXTURE.stat().st_size:  # small sessions: a prefix of the fixture each
        meta = synth.write_archive(projects, sessions, workspaces, mb << 20)
    else:
        meta = _write_repeated(projects, sessions, workspaces, per)
    stamp.write_text(json.dumps(meta))
    return base / "home", meta


def _write_repeated(projects: Path, sessions: int, workspaces: int, per: int) -> dict[str, Any]:
    """Sessions of ≥ `per` bytes: every fixture line repeated (`synth.write_transcript`'s way),
    each copy with its own uuids, and each session on its own day (one of the last 30; its
    copies hours apart), as a real archive's sessions are: the fixture's own times are one
    night of 2025, which would put every session of the archive at the same moments."""
    records, templates = synth.load_records(), {}
    written, now = 0, time.time()
    for i in range(sessions):
        w = i % workspaces
        cwd = f"/home/bench/search/project-{w:03d}"
        if w not in templates:
            templates[w] = synth._template_bytes(records, cwd)
        sid = str(uuid.UUID(int=i + 1))
        mtime = now - 30 * 86400 * (1 - i / sessions)
        day = time.strftime("%Y-%m-%d", time.gmtime(mtime)).encode()
        body = templates[w].replace(b"@@SID@@", sid.encode())
        path = projects / cwd.replace("/", "-") / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            rep = 0
            while fh.tell() < per:
                chunk = body.replace(b"@@U8@@", f"{rep:08x}".encode())
                hour = f"T{rep % 3}".encode()  # the fixture's hours 00–01: 00, 10, 20 …
                fh.write(chunk.replace(_FIXTURE_DAY, b'"timestamp":"' + day + hour))
                rep += 1
            written += fh.tell()
        os.utime(path, (mtime, mtime))
    return {"sessions": sessions, "workspaces": workspaces, "bytes": written}


async def _listed(s: aiohttp.ClientSession, base: str, ws: str) -> None:
    for _ in range(6000):
        async with s.get(f"{base}/workspace/{ws}/sessions", headers=peers.AUTH) as r:
            if r.status == 200 and LIVE in {x["id"] for x in (await r.json())["sessions"]}:
                return
        await asyncio.sleep(0.05)
    raise RuntimeError("the live session was never listed")


class Appender:
    """Real lines with fresh markers appended to the live session; each one's lag until a
    search answers it."""

    def __init__(self, path: Path, base: str) -> None:
        self.path, self.base = path, base
        self.factory = synth.LineFactory(LIVE)
        self.n = 0
        self.written: dict[int, float] = {}  # marker -> monotonic time just before its write

    async def one(self, s: aiohttp.ClientSession) -> float:
        mark = synth.marker(self.n)
        with self.path.open("ab") as fh:
            t0 = time.perf_counter()
            self.written[self.n] = time.monotonic()
            fh.write(self.factory.line(self.n))
        self.n += 1
        while True:
            _ms, body = await _get(s, self.base + "/api/search", q=mark)
            if body["hits"]:
                return (time.perf_counter() - t0) * 1000
            if time.perf_counter() - t0 > 60:
                raise RuntimeError(f"{mark} never became searchable")
            await asyncio.sleep(POLL_S)


def lag_figures(lags: list[float]) -> dict[str, Any]:
    if not lags:
        return {"n": 0}
    return {
        "n": len(lags),
        "p50_ms": round(statistics.median(lags), 1),
        "max_ms": round(max(lags), 1),
    }


async def measure(
    root: Path, mb: int, sessions: int, profile: Path | None = None, idle_s: float = 10.0
) -> dict[str, Any]:
    home, meta = build_archive(peers.BENCH / "data", mb, sessions)
    # A fresh data dir each run (the archive is kept): the index is built from nothing.
    shutil.rmtree(home.parent / "sm-data", ignore_errors=True)
    shutil.rmtree(home.parent / "sm-runtime", ignore_errors=True)
    live = home / ".claude/projects" / synth.CWD.replace("/", "-") / f"{LIVE}.jsonl"
    synth.seed_session(live, LIVE)
    out: dict[str, Any] = {"archive": meta, "loadavg_start": os.getloadavg()[0]}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 120)
        pid = run.proc.pid
        rss0, peak, t0, cpu0 = rss_kb(pid), rss_kb(pid), time.monotonic(), client.cpu_seconds(pid)
        spy = pyspy.Profile(pid, profile, 3600) if profile else None
        appender, during = Appender(live, run.base), []
        async with aiohttp.ClientSession() as s:
            # The live session's stream, as a side panel reads it: append → event meanwhile.
            ws = hashlib.sha256(synth.CWD.encode()).hexdigest()[:12]
            await _listed(s, run.base, ws)
            url = f"{run.base}/workspace/{ws}/session/stream?session={LIVE}"
            watcher = client.SseWatcher(url, peers.AUTH, b"event: snapshot")
            stop = asyncio.Event()
            watching = asyncio.create_task(watcher.run(s, stop))
            await asyncio.wait_for(watcher.ready.wait(), 60)
            next_append = t0 + 3.0  # the backfill starts 2 s after the index opens
            while True:
                _ms, health = await _get(s, run.base + "/health")
                progress = health.get("search_index") or {}
                peak = max(peak, rss_kb(pid))
                if progress.get("total", 0) > sessions and progress["done"] == progress["total"]:
                    break
                if time.monotonic() - t0 > 3 * 3600:
                    raise RuntimeError(f"index not built in 3 hours: {progress}")
                if time.monotonic() >= next_append:
                    during.append(await appender.one(s))
                    next_append = time.monotonic() + APPEND_EVERY_S
                await asyncio.sleep(0.2)
            took = time.monotonic() - t0
            cpu = client.cpu_seconds(pid) - cpu0
            if spy is not None and spy.proc is not None:
                spy.proc.send_signal(signal.SIGINT)  # py-spy writes its file and exits
                spy.finish()
            out["build"] = {
                "seconds": round(took, 1),
                "cores": round(cpu / took, 2),
                "rss_start_mb": round(rss0 / 1024, 1),
                "rss_growth_mb": round((peak - rss0) / 1024, 1),
                "mb_per_s": round(meta["bytes"] / 2**20 / took, 1),
                "loadavg_end": os.getloadavg()[0],
            }
            index = home.parent / "sm-data" / "index.sqlite3"
            out["build"]["index_mb"] = round(index.stat().st_size / 2**20, 1)
            out["append_searchable_during_build"] = lag_figures(during)
            seen = watcher.seen.first
            out["append_event_during_build"] = lag_figures(
                [(seen[n] - t) * 1000 for n, t in appender.written.items() if n in seen]
            )
            out["queries"] = {}
            every = []
            for q in QUERIES:
                times, hits = [], 0
                for _ in range(ROUNDS):
                    ms, body = await _get(s, run.base + "/api/search", q=q)
                    times.append(ms)
                    hits = len(body["hits"])
                every += times
                out["queries"][q] = {
                    "p50_ms": round(statistics.median(times), 1),
                    "p95_ms": client.percentile(times, 95),
                    "hits": hits,
                }
            out["query_p50_ms"] = round(statistics.median(every), 1)
            out["query_p95_ms"] = client.percentile(every, 95)
            after = [await appender.one(s) for _ in range(20)]
            out["append_searchable_after_build"] = lag_figures(after)
            await asyncio.sleep(1.0)
            cpu1 = client.cpu_seconds(pid)
            await asyncio.sleep(idle_s)
            out["idle_cpu_percent"] = round((client.cpu_seconds(pid) - cpu1) / idle_s * 100, 1)
            out["loadavg_end"] = os.getloadavg()[0]
            stop.set()
            watching.cancel()
    return out


def rows(res: dict[str, Any] | None, blank: list[str]) -> list[str]:
    """Table rows for bench/run.py."""
    if not res:
        return []
    a, b = res["archive"], res["build"]
    tag = f"{a['bytes'] / 2**30:.2f} GB / {a['sessions']} sessions"
    cells = [
        (f"search index build, {tag}", f"{b['seconds']} s, {b['cores']} cores"),
        ("search index build: RSS growth", f"{b['rss_growth_mb']} MB"),
        ("search query p50 / p95", f"{res['query_p50_ms']} / {res['query_p95_ms']:.1f} ms"),
    ]
    lag = res["append_event_during_build"]
    cells.append(("append→SSE event during the build p50 / max", _p50_max(lag)))
    for key in ("during", "after"):
        lag = res[f"append_searchable_{key}_build"]
        cells.append((f"append→searchable {key} the build p50 / max", _p50_max(lag)))
    cells.append(("idle CPU once the search index is complete", f"{res['idle_cpu_percent']} %"))
    return [client.table_row(label, value, blank) for label, value in cells]


def _p50_max(lag: dict[str, Any]) -> str:
    return f"{lag.get('p50_ms')} / {lag.get('max_ms')} ms"


if __name__ == "__main__":
    import tempfile

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--mb", type=int, default=100)
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--profile", type=Path, default=None, help="py-spy raw stacks of the build")
    p.add_argument("--idle-s", type=float, default=10.0)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="sm-search-") as tmp:
        res = asyncio.run(measure(Path(tmp), a.mb, a.sessions, a.profile, a.idle_s))
        print(json.dumps(res, indent=2))
