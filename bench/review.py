"""Reading a session like a reviewer (issue 16): `before=` pages, search, a mid-size open.

- **open**: first `GET /workspace/{id}/session?limit=200` of a 24 MB transcript (fresh server,
  fresh data dir), then warm.
- **history**: on a transcript past the size read from near its end, `before=` pages of 200:
  warm (from the part held) and from the unread part (read on demand: first, p50, mean, p90),
  with the server's RSS before and after paging 50 pages back into it.
- **search**: an archive built from the real fixture transcript (`synth.write_archive`); time
  until `/health` says the index holds every session, then the p50 of queries for words of the
  fixture's text, and append → searchable: a real line with a fresh marker appended to a
  session, then `/api/search?q=<marker>` polled every 10 ms until it answers the hit.

    .bench/venv/bin/python bench/run.py --only review
    .bench/venv/bin/python bench/review.py [--full] [--parts open,history,search]   # alone, JSON
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import client  # noqa: E402
import peers  # noqa: E402
import synth  # noqa: E402

SESSION = "5e551000-0000-4000-8000-00000000be9c"
PROJECT = synth.CWD.replace("/", "-")
PARTS = "open,history,search"
QUERIES = ["Tailwind", "component", "orchestrator", "TODO", '"Next.js"', "localStorage", "test*"]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def timed_get(s: aiohttp.ClientSession, url: str, **params: str) -> tuple[float, Any]:
    t0 = time.perf_counter()
    async with s.get(url, params=params, headers=peers.AUTH) as r:
        body = await r.json()
        if r.status != 200:
            raise RuntimeError(f"{url} {params}: {r.status} {body}")
    return (time.perf_counter() - t0) * 1000, body


async def _workspace(s: aiohttp.ClientSession, base: str) -> str:
    for _ in range(1500):
        async with s.get(base + "/api/workspaces", headers=peers.AUTH) as r:
            listed = (await r.json())["workspaces"]
        if listed:
            return str(listed[0]["id"])
        await asyncio.sleep(0.02)
    raise RuntimeError("the transcript was never listed")


async def open_and_page(root: Path, mb: int, pages: int) -> dict[str, Any]:
    home = root / f"review-{mb}" / "home"
    path = home / ".claude/projects" / PROJECT / f"{SESSION}.jsonl"
    size = synth.write_transcript(path, SESSION, mb << 20)
    out: dict[str, Any] = {"transcript_bytes": size}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 60)
        async with aiohttp.ClientSession() as s:
            ws = await _workspace(s, run.base)
            route = f"{run.base}/workspace/{ws}/session"
            first, snap = await timed_get(s, route, session=SESSION, limit="200")
            warm, _ = await timed_get(s, route, session=SESSION, limit="200")
            out |= {"open_ms": round(first, 1), "open_warm_ms": round(warm, 1)}
            out["skipped_bytes"] = snap["skipped_bytes"]
            # Warm pages: the part held (memory and spill file), from the newest back.
            times = []
            before = snap["items"][0]["id"]
            for _ in range(min(pages, max(1, snap["total"] // 200 - 1))):
                ms, page = await timed_get(s, route, session=SESSION, before=before, limit="200")
                times.append(ms)
                before = page["items"][0]["id"]
            out["page_warm_p50_ms"] = round(statistics.median(times), 1)
            if snap["skipped_bytes"]:
                # Into the unread part: jump there (the first item held), then page on.
                held = snap["total"]
                _, whole = await timed_get(s, route, session=SESSION, limit=str(min(held, 10000)))
                before = whole["items"][0]["id"]
                rss0 = rss_kb(run.proc.pid)
                times, peak = [], rss0
                for _ in range(pages):
                    ms, page = await timed_get(
                        s, route, session=SESSION, before=before, limit="200"
                    )
                    times.append(ms)
                    peak = max(peak, rss_kb(run.proc.pid))
                    if not page["items"]:
                        break
                    before = page["items"][0]["id"]
                out["page_unread_first_ms"] = round(times[0], 1)
                out["page_unread_p50_ms"] = round(statistics.median(times), 1)
                # A read parses whole turns and serves the next pages from them: the mean and
                # p90 show what the pages that parse cost, which the median can hide.
                out["page_unread_mean_ms"] = round(statistics.fmean(times), 1)
                out["page_unread_p90_ms"] = client.percentile(times, 90)
                out["page_unread_rss_growth_mb"] = round((peak - rss0) / 1024, 1)
    return out


async def search(root: Path, total_mb: int, sessions: int, appends: int) -> dict[str, Any]:
    home = root / "review-search" / "home"
    projects = home / ".claude/projects"
    archive = synth.write_archive(projects, sessions, max(1, sessions // 20), total_mb << 20)
    live = projects / PROJECT / f"{SESSION}.jsonl"
    synth.seed_session(live, SESSION)
    out: dict[str, Any] = {"archive": archive}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 60)
        rss0 = rss_kb(run.proc.pid)
        t0 = time.monotonic()
        cpu0 = client.cpu_seconds(run.proc.pid)
        peak = rss0
        async with aiohttp.ClientSession() as s:
            while True:
                async with s.get(run.base + "/health") as r:
                    progress = (await r.json()).get("search_index") or {}
                peak = max(peak, rss_kb(run.proc.pid))
                if progress.get("total", 0) > sessions and progress["done"] == progress["total"]:
                    break
                if time.monotonic() - t0 > 3600:
                    raise RuntimeError(f"index not built in an hour: {progress}")
                await asyncio.sleep(0.2)
            took = time.monotonic() - t0
            out["index_build_s"] = round(took, 1)
            out["index_build_cpu_cores"] = round(
                (client.cpu_seconds(run.proc.pid) - cpu0) / took, 2
            )
            out["index_build_rss_growth_mb"] = round((peak - rss0) / 1024, 1)
            index = home.parent / "sm-data" / "index.sqlite3"
            out["index_mb"] = round(index.stat().st_size / 2**20, 1)
            times = []
            for _round in range(5):
                for q in QUERIES:
                    ms, _body = await timed_get(s, run.base + "/api/search", q=q)
                    times.append(ms)
            out["query_p50_ms"] = round(statistics.median(times), 1)
            out["query_p95_ms"] = client.percentile(times, 95)
            # append → searchable
            factory = synth.LineFactory(SESSION)
            lags = []
            for n in range(appends):
                mark = synth.marker(n)
                with live.open("ab") as fh:
                    t1 = time.perf_counter()
                    fh.write(factory.line(n))
                while True:
                    _ms, body = await timed_get(s, run.base + "/api/search", q=mark)
                    if body["hits"]:
                        lags.append((time.perf_counter() - t1) * 1000)
                        break
                    if time.perf_counter() - t1 > 30:
                        raise RuntimeError(f"{mark} never became searchable")
                    await asyncio.sleep(0.01)
            out["append_searchable_p50_ms"] = round(statistics.median(lags), 1)
            out["append_searchable_max_ms"] = round(max(lags), 1)
    return out


async def review(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    full = getattr(args, "full", False)
    parts = set(getattr(args, "parts", PARTS).split(","))
    res: dict[str, Any] = {}
    if "open" in parts:
        res["open_24mb"] = await open_and_page(root, 24, 5)
    if "history" in parts:
        res["history"] = await open_and_page(root, 1024 if full else 100, 50)
    if "search" in parts:
        res["search"] = await search(root, 2048 if full else 200, 1000 if full else 200, 20)
    return res


if __name__ == "__main__":
    import tempfile

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--full", action="store_true", help="1 GB transcript, 2 GB / 1,000 sessions")
    p.add_argument("--parts", default=PARTS, help="which parts to run (comma-separated)")
    with tempfile.TemporaryDirectory(prefix="sm-review-") as tmp:
        print(json.dumps(asyncio.run(review(Path(tmp), p.parse_args())), indent=2))
