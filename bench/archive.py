"""Archive phase (issue 22): a heavy user's machine, thousands of sessions on disk.

For each size (1,000 by default; `--archive-sessions 1000,10000`): an archive of real transcript
content (`synth.write_archive`: ≈ 20 KB sessions over `sessions / 50` project folders, mtimes over
30 days), then
- **cold**: our server on a fresh data dir; from `Popen`: the first `/health` answer (while the
  server is imported it says `"status": "starting"`), the first that says `"ok"` (every route
  served), the moment `/health` says `indexing.done == total` (everything listed), the server's
  CPU seconds at each, peak and settled RSS, the CPU the search index's background fill takes,
  idle CPU with every file watched once that is complete, and append→SSE event latency for
  lines appended to the newest session while the rest is still being indexed;
- **warm**: the same server started again on the same data dir (the file index is kept): the
  same figures, and how many files it read again (`indexing.read`);
- **peer**: vibedeck (the one peer with a live session list) on the same archive: first `/health`,
  its list (the `catchup_complete` of `GET /events`), RSS, idle CPU.
The page cache is not dropped (other work shares this machine): "cold" is a cold *index*.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import peers
import synth

BYTES_PER_SESSION = 20_000
APPEND_EVERY_S = 0.05
AFTER_S = 3.0
QUIET_STARTS = 5  # warm starts with nothing else asked (`quiet_start`): the median is shown
SEARCH_WAIT_S = 240.0  # at most this long for the search index, before idle is measured


def build(data: Path, sessions: int) -> tuple[Path, dict[str, Any]]:
    """The archive's HOME (built once, kept under .bench/data) and what it holds."""
    base = data / f"archive-{sessions}s-20kb"
    stamp = base / "meta.json"
    if stamp.exists():
        return base / "home", json.loads(stamp.read_text())
    workspaces = max(1, sessions // 50)
    meta = synth.write_archive(
        base / "home/.claude/projects", sessions, workspaces, sessions * BYTES_PER_SESSION
    )
    stamp.write_text(json.dumps(meta))
    return base / "home", meta


def newest(meta: dict[str, Any]) -> tuple[str, str]:
    """The newest session's workspace id and session id (see synth.write_archive)."""
    i = meta["sessions"] - 1
    cwd = f"/home/bench/archive/project-{i % meta['workspaces']:03d}"
    sid = str(synth.uuid.UUID(int=i + 1))
    return hashlib.sha256(cwd.encode()).hexdigest()[:12], sid


async def _get(s: aiohttp.ClientSession, url: str) -> Any | None:
    try:
        async with s.get(url, headers=peers.AUTH, timeout=aiohttp.ClientTimeout(total=5)) as r:
            return await r.json() if r.status == 200 else None
    except (aiohttp.ClientError, OSError, TimeoutError):
        return None


async def ours(home: Path, data_dir: Path, meta: dict[str, Any], idle_s: float) -> dict[str, Any]:
    # The run appends to the newest session; it gets its old size back after, or every run
    # would start from a bigger file (and a big one is loaded, read and held differently).
    appended = _newest_path(home, meta)
    size_before = appended.stat().st_size
    try:
        return await _ours(home, data_dir, meta, idle_s)
    finally:
        os.truncate(appended, size_before)


def _newest_path(home: Path, meta: dict[str, Any]) -> Path:
    _, sid = newest(meta)
    return next((home / ".claude/projects").glob(f"*/{sid}.jsonl"))


def _spawn_ours(home: Path, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Our server on `home`'s archive with `data_dir`: the process and its base URL."""
    port = peers.free_port()
    argv = peers.ours_argv(home, port)
    argv[argv.index("--data-dir") + 1] = str(data_dir)
    env = peers._env(home, {"SIDEMIRROR_TOKEN": peers.TOKEN})
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # peers.stop signals the process group
    )
    return proc, f"http://127.0.0.1:{port}"


async def _ours(home: Path, data_dir: Path, meta: dict[str, Any], idle_s: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    proc, base = _spawn_ours(home, data_dir)
    rss = client.RssSampler(proc.pid, 0.02)
    rss.start()
    stop = asyncio.Event()
    try:
        async with aiohttp.ClientSession() as s:
            health = None
            while health is None and time.monotonic() - t0 < 60:
                health = await _get(s, base + "/health")
                await asyncio.sleep(0 if health else 0.01)
            if health is None:
                return {"error": "no /health within 60 s"}
            out["health_s"] = round(time.monotonic() - t0, 3)
            out["health_cpu_s"] = round(client.cpu_seconds(proc.pid), 3)
            out["indexing_at_first_health"] = health["indexing"]
            out["first_health_status"] = health["status"]
            live = asyncio.create_task(_live_append(s, base, home, meta, stop))
            while True:
                if health and health["status"] == "ok" and "ready_s" not in out:
                    out["ready_s"] = round(time.monotonic() - t0, 3)
                    out["ready_cpu_s"] = round(client.cpu_seconds(proc.pid), 3)
                health = await _get(s, base + "/health")
                ix = health["indexing"] if health else {}
                if ix.get("total") is not None and ix["done"] >= ix["total"]:
                    break
                if time.monotonic() - t0 > 600:
                    return {**out, "error": "not listed within 600 s"}
                await asyncio.sleep(0.02)
            out["listed_s"] = round(time.monotonic() - t0, 3)
            out["listed_cpu_s"] = round(client.cpu_seconds(proc.pid), 3)
            out["indexing"] = ix
            listing = await _get(s, base + "/api/workspaces")
            out["workspaces_listed"] = len(listing["workspaces"]) if listing else None
            stop.set()
            out["live_append"] = await live
            await asyncio.sleep(1.0)
            out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
            out["rss_mb"] = round(rss.rss() / 2**20, 1)
            # Right after the listing the search index fills in the background (≤ 1 core):
            # that is work, not idling. Idle is measured once it is complete.
            out["cpu_while_search_fills"] = idle(proc.pid, idle_s)
            started = time.monotonic()
            while time.monotonic() - started < SEARCH_WAIT_S:
                health = await _get(s, base + "/health")
                search = (health or {}).get("search_index") or {}
                if search and search.get("done") == search.get("total"):
                    out["search_index_s"] = round(time.monotonic() - t0, 1)
                    out["idle"] = idle(proc.pid, idle_s)
                    break
                await asyncio.sleep(0.5)
            else:
                out["idle"] = {"error": f"search index not complete within {SEARCH_WAIT_S:.0f} s"}
            out["settled_rss_mb"] = round(rss.rss() / 2**20, 1)
    finally:
        stop.set()
        rss.stop_flag.set()
        peers.stop(proc)
    return out


async def _live_append(
    s: aiohttp.ClientSession, base: str, home: Path, meta: dict[str, Any], stop: asyncio.Event
) -> dict[str, Any]:
    """Lines appended to the newest session (indexed first) while the rest is indexed, and for
    `AFTER_S` after: how long each takes to reach an SSE client, in each part."""
    ws, sid = newest(meta)
    path = _newest_path(home, meta)
    while not stop.is_set():  # the newest session is among the first indexed
        if await _get(s, f"{base}/workspace/{ws}/sessions"):
            break
        await asyncio.sleep(0.01)
    if stop.is_set():
        return {"error": "indexing was done before the newest session could be watched"}
    watcher = client.SseWatcher(
        f"{base}/workspace/{ws}/session/stream?session={sid}", peers.AUTH, b"event: snapshot"
    )
    done = asyncio.Event()
    task = asyncio.create_task(watcher.run(s, done))
    await watcher.ready.wait()
    cwd = f"/home/bench/archive/project-{(meta['sessions'] - 1) % meta['workspaces']:03d}"
    factory = synth.LineFactory(sid, cwd)
    appender = client.Appender(path, factory.line, 100_000, APPEND_EVERY_S)
    appender.start()
    await stop.wait()
    listed = time.monotonic()
    # The same appends for a while after indexing is done: the machine's figure without it.
    await asyncio.sleep(AFTER_S)
    appender.stop_flag.set()
    appender.join()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not set(appender.sent) <= watcher.seen.first.keys():
        await asyncio.sleep(0.05)
    done.set()
    task.cancel()
    out = {}
    for name, sent in (
        ("while_indexing", {n: t for n, t in appender.sent.items() if t < listed}),
        ("after_indexing", {n: t for n, t in appender.sent.items() if t >= listed}),
    ):
        lat = [watcher.seen.first[n] - t for n, t in sent.items() if n in watcher.seen.first]
        out[name] = client.summary_ms(lat, len(sent))
    return out


def idle(pid: int, seconds: float) -> dict[str, Any]:
    time.sleep(1.0)
    c0, w0 = client.cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    c1, w1 = client.cpu_seconds(pid), time.monotonic()
    return {"seconds": round(w1 - w0, 1), "cpu_percent": round(100 * (c1 - c0) / (w1 - w0), 3)}


async def vibedeck(home: Path, idle_s: float) -> dict[str, Any]:
    if not peers.PEER_DIRS["vibedeck"].exists():
        return {"error": f"not installed ({peers.PEER_DIRS['vibedeck']})"}
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    with peers.start_vibedeck(home) as run:
        rss = client.RssSampler(run.proc.pid, 0.02)
        rss.start()
        try:
            await peers.wait_http(run.base + "/health", run.proc, 300)
            out["health_s"] = round(time.monotonic() - t0, 3)
            watcher = client.SseWatcher(run.base + "/events", {}, b"catchup_complete")
            stop = asyncio.Event()
            async with aiohttp.ClientSession() as s:
                late = "no catchup_complete within 600 s"
                task = await client.start_watcher(s, watcher, stop, 600, late)
                stop.set()
                task.cancel()
            if watcher.error:
                return {**out, "error": watcher.error, "log": peers.tail_log(run.log)}
            out["listed_s"] = round(time.monotonic() - t0, 3)
            out["listed_cpu_s"] = round(client.cpu_seconds(run.proc.pid), 3)
            await asyncio.sleep(1.0)
            out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
            out["rss_mb"] = round(rss.rss() / 2**20, 1)
            out["idle"] = idle(run.proc.pid, idle_s)
        except (RuntimeError, TimeoutError, aiohttp.ClientError) as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            rss.stop_flag.set()
    return out


async def empty_start(root: Path) -> dict[str, Any]:
    """The server's own start, no archive: what any start pays."""
    home = root / "archive-empty" / "home"
    (home / ".claude/projects").mkdir(parents=True, exist_ok=True)
    return await quiet_start(home, Path(tempfile.mkdtemp(prefix="data-", dir=home.parent)))


async def quiet_start(home: Path, data_dir: Path) -> dict[str, Any]:
    """A start with nothing else asked of the server, from `Popen`: the first `/health`, the
    first that says "ok" (everything imported, every route served), and the first that says
    `indexing.done == total` (everything listed). The cold and warm runs also hold a stream
    open and append to a session while they wait, and the bench's own client shares the two
    cores: this is the listing alone."""
    out: dict[str, Any] = {}
    t0 = time.monotonic()
    proc, base = _spawn_ours(home, data_dir)
    try:
        async with aiohttp.ClientSession() as s:
            while time.monotonic() - t0 < 60:
                health = await _get(s, base + "/health")
                at = round(time.monotonic() - t0, 3)
                if health and "health_s" not in out:
                    out["health_s"] = at
                if health and health["status"] == "ok":
                    if "ready_s" not in out:
                        out["ready_s"] = at
                        out["ready_cpu_s"] = round(client.cpu_seconds(proc.pid), 3)
                    ix = health["indexing"]
                    if ix["total"] is not None and ix["done"] >= ix["total"]:
                        out["listed_s"] = at
                        return out
                await asyncio.sleep(0.01)
        return {**out, "error": "not listed within 60 s"}
    finally:
        peers.stop(proc)


async def phase(root: Path, data: Path, sizes: list[int], args: Any, log: Any) -> dict[str, Any]:
    res: dict[str, Any] = {"empty": {"empty": await empty_start(root)}}
    log(f"archive: empty: {res['empty']['empty']}")
    for n in sizes:
        log(f"archive: {n} sessions (building once, then cold, warm, warm quiet, peer)")
        home, meta = build(data, n)
        data_dir = root / f"archive-{n}-data"
        entry: dict[str, Any] = {"archive": meta}
        entry["cold"] = await ours(home, data_dir, meta, args.archive_idle_s)
        log(f"  cold: {entry['cold']}")
        entry["warm"] = await ours(home, data_dir, meta, args.archive_idle_s)
        log(f"  warm: {entry['warm']}")
        entry["warm_quiet"] = [await quiet_start(home, data_dir) for _ in range(QUIET_STARTS)]
        log(f"  warm, nothing else asked: {entry['warm_quiet']}")
        if "vibedeck" not in args.skip_peers:
            entry["vibedeck"] = await vibedeck(home, args.archive_idle_s)
            log(f"  vibedeck: {entry['vibedeck']}")
        res[str(n)] = entry
    return res


def rows(res: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) lines for the results table."""
    out: list[tuple[str, str]] = []
    empty = res.get("empty", {}).get("empty")
    if empty is not None:
        tag = "archive empty (the server's own start)"
        if "error" in empty:
            out.append((tag, "error: " + str(empty["error"])[:60]))
        else:
            out.append((f"{tag}: first /health", f"{empty.get('health_s')} s"))
            serving = f"{empty.get('ready_s')} s (CPU {empty.get('ready_cpu_s')} s)"
            out.append((f"{tag}: serving every route", serving))
    for n, entry in res.items():
        if n == "empty":
            continue
        for run in ("cold", "warm", "vibedeck"):
            r = entry.get(run)
            if r is None:
                continue
            tag = f"archive {int(n):,} sessions, {run}"
            if "error" in r:
                out.append((tag, "error: " + str(r["error"])[:60]))
                continue
            first = f"{r.get('health_s')} s"
            if "health_cpu_s" in r:
                first += f" (CPU {r['health_cpu_s']} s)"
            if "first_health_status" in r:
                first += f", {r['first_health_status']}"
            out.append((f"{tag}: first /health", first))
            if "ready_s" in r:
                ready = f"{r['ready_s']} s (CPU {r['ready_cpu_s']} s)"
                out.append((f"{tag}: serving every route", ready))
            listed = f"{r.get('listed_s')} s (CPU {r.get('listed_cpu_s')} s)"
            if "ready_s" in r and "listed_s" in r:  # what the archive adds to the server's start
                listed += f", {r['listed_s'] - r['ready_s']:.3f} s after serving"
            if "indexing" in r:
                listed += f", {r['indexing'].get('read')} files read"
            out.append((f"{tag}: everything listed", listed))
            memory = f"{r.get('rss_mb')} / {r.get('peak_rss_mb')} MB"
            out.append((f"{tag}: RSS settled / peak", memory))
            if "cpu_while_search_fills" in r:
                fills = r["cpu_while_search_fills"].get("cpu_percent")
                out.append((f"{tag}: CPU while the search index fills", f"{fills} %"))
            idle_cpu = r.get("idle", {})
            idle_text = idle_cpu.get("error") or f"{idle_cpu.get('cpu_percent')} %"
            if "search_index_s" in r:
                idle_text += f" (search index complete at {r['search_index_s']} s)"
            out.append((f"{tag}: idle CPU", idle_text))
            if "settled_rss_mb" in r:
                out.append((f"{tag}: RSS once idle", f"{r['settled_rss_mb']} MB"))
            live = r.get("live_append", {})
            if "error" in live:
                out.append((f"{tag}: append→event", str(live["error"])[:60]))
            for when in ("while_indexing", "after_indexing"):
                got = live.get(when)
                if got:
                    label = f"{tag}: append→event {when.replace('_', ' ')} p50 / p90 (n={got['n']})"
                    out.append((label, f"{got['p50_ms']} / {got['p90_ms']} ms"))
        quiet = [r for r in entry.get("warm_quiet", []) if "listed_s" in r]
        failed = [r for r in entry.get("warm_quiet", []) if "listed_s" not in r]
        if failed:
            tag = f"archive {int(n):,} sessions, warm, nothing else asked"
            out.append((f"{tag}: {len(failed)} failed", str(failed[0].get("error"))[:60]))
        if quiet:
            tag = f"archive {int(n):,} sessions, warm, nothing else asked ({len(quiet)} starts)"
            out.append(
                (f"{tag}: serving every route, median", _spread([r["ready_s"] for r in quiet]))
            )
            listed = _spread([r["listed_s"] for r in quiet])
            after = _spread([r["listed_s"] - r["ready_s"] for r in quiet])
            out.append((f"{tag}: everything listed, median", f"{listed}; {after} after serving"))
    return out


def _spread(values: list[float]) -> str:
    """The median, and the range when there is more than one value."""
    text = f"{statistics.median(values):.3f} s"
    if len(values) > 1:
        text += f" ({min(values):.3f}–{max(values):.3f})"
    return text
