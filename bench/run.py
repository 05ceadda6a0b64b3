"""Sidemirror benchmarks, side by side with the peers (issue 3 first version, issue 9).

Run through `scripts/bench` (it makes the venvs); `scripts/bench --full` uses the issue's sizes.
Every loop is bounded in count and in time. Results: a table on stdout and `.bench/results.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_scan  # noqa: E402
import archive as archive_phase  # noqa: E402
import cli_startup  # noqa: E402
import client  # noqa: E402
import export_memory  # noqa: E402
import fleet as fleet_phase  # noqa: E402
import floor  # noqa: E402
import forward  # noqa: E402
import hook_cost  # noqa: E402
import line_cost  # noqa: E402
import md_render  # noqa: E402
import panel  # noqa: E402
import peers  # noqa: E402
import pyspy as prof  # noqa: E402
import rendered  # noqa: E402
import review  # noqa: E402
import search_scale  # noqa: E402
import session_list  # noqa: E402
import synth  # noqa: E402

BENCH = peers.BENCH
RESULTS = BENCH / "results.json"
DATA = BENCH / "data"
SESSION = "5e551000-0000-4000-8000-00000000be9c"
# What each section that is one measurement says as it starts (formatted with the arguments), in
# the order they run; their results are logged and saved as they come (`main`'s `phase`).
SAYS = {
    "rendered": "append → rendered in the side panel (Chromium)",
    "markdown": "Markdown of long replies in the side panel page (Chromium)",
    "cold_start": "cold start + idle CPU",
    "forward": "forward: {args.forward_mb} MB over loopback, then live appends",
    "review": "review: open a 24 MB transcript, before= pages, search",
    "search": "search: the full-text index of a {args.search_mb} MB / {args.search_sessions}"
    " sessions archive, queries, appends",
    "hook": "sidemirror hook: cost per tool call, and hook → waiting",
    "cli": "cli start-up (--version, status, token)",
    "panel": "panel: the timeline at {args.panel_items:,} items (Chromium)",
    "sessionlist": "session list: {args.list_sessions:,} sessions (Chromium)",
    "export": "export: a {args.export_mb} MB session as {args.export_formats}",
    "agent_scan": "agents seen as they start: scan cost, idle CPU, time to see one",
    "fanout": "fanout",
    "linecost": "line cost: the server's CPU per appended line, a fleet of 20 at 400 lines/s",
}
PROJECT = synth.CWD.replace("/", "-")


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def fresh_home(root: Path, name: str) -> Path:
    home = root / name / "home"
    (home / ".claude/projects").mkdir(parents=True)
    return home


# --- 1. append → event latency -------------------------------------------------------------

Starter = Callable[[Path], AbstractContextManager[peers.Running]]


async def _watcher_for(name: str, run: peers.Running, args: argparse.Namespace):
    if name == "sidemirror":
        await peers.wait_http(run.base + "/health", run.proc, 60)
        url = await peers.ours_stream_url(run, SESSION)
        return client.SseWatcher(url, peers.AUTH, b"event: snapshot")
    if name == "vibedeck":
        await peers.wait_http(run.base + "/health", run.proc, 120)
        return client.SseWatcher(run.base + "/events", {}, b"catchup_complete")
    # claude-code-log: the server comes up after its startup conversion
    await peers.wait_http(run.base + "/index.html", run.proc, 300)
    url = peers.ccl_page_url(run, SESSION)
    if url is None:
        raise RuntimeError("no session page was generated")
    return client.PollWatcher(url, args.ccl_poll_ms / 1000)


async def latency(name: str, start: Starter, root: Path, args: argparse.Namespace) -> dict:
    home = fresh_home(root, name)
    path = home / ".claude/projects" / PROJECT / f"{SESSION}.jsonl"
    synth.seed_session(path, SESSION)
    factory = synth.LineFactory(SESSION)
    out: dict[str, Any] = {}
    with start(home) as run:
        try:
            watcher = await _watcher_for(name, run, args)
        except Exception as exc:  # a peer that cannot run here: say why, carry on
            return {"error": f"{exc}", "log": peers.tail_log(run.log)}
        rss = client.RssSampler(run.proc.pid, 0.1)
        rss.start()
        stop = asyncio.Event()
        async with aiohttp.ClientSession() as session:
            task = await client.start_watcher(session, watcher, stop, 60)
            if watcher.error:
                stop.set()
                task.cancel()
                rss.stop_flag.set()
                return {"error": watcher.error, "log": peers.tail_log(run.log)}
            await asyncio.sleep(1.0)  # same settle time for every tool (watchers armed)
            first = 0
            phases = [
                ("steady_5_per_s", dict(interval=1 / args.rate, burst=None, pause=0.0)),
                ("burst_100_per_s", dict(interval=0.01, burst=args.burst, pause=1.0)),
            ]
            for phase, kw in phases:
                app = client.Appender(path, factory.line, args.appends, first=first, **kw)
                spy = prof.Profile(
                    run.proc.pid,
                    _pfile(args, f"latency-{name}-{phase}"),
                    min(30, args.appends * kw["interval"]),
                )
                t0 = time.monotonic()
                app.start()
                budget = args.appends * kw["interval"] + 60
                while app.is_alive() and time.monotonic() - t0 < budget:
                    await asyncio.sleep(0.05)
                app.stop_flag.set()
                spy.finish()
                # grace: wait until every marker showed up, bounded
                deadline = time.monotonic() + args.grace
                wanted = set(app.sent)
                while time.monotonic() < deadline and not wanted <= watcher.seen.first.keys():
                    await asyncio.sleep(0.05)
                lat = [
                    watcher.seen.first[n] - t
                    for n, t in app.sent.items()
                    if n in watcher.seen.first
                ]
                out[phase] = client.summary_ms(lat, len(app.sent))
                # Steady-rate figures move with the machine's load (a shared VM): say what it was.
                out[phase]["loadavg_1m"] = round(os.getloadavg()[0], 2)
                log(f"  {name} {phase}: {out[phase]}")
                first += args.appends
                await asyncio.sleep(1.0)
            stop.set()
            task.cancel()
        rss.stop_flag.set()
        out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
        if watcher.error:
            out["stream_error"] = watcher.error
    return out


# --- 3. cold start on an archive -----------------------------------------------------------


def archive(args: argparse.Namespace) -> tuple[Path, dict]:
    total = int(args.archive_gb * 2**30)
    base = DATA / f"archive-{args.sessions}s-{args.archive_gb:g}gb"
    stamp = base / "meta.json"
    if stamp.exists():
        return base / "home", json.loads(stamp.read_text())
    shutil.rmtree(base, ignore_errors=True)
    log(f"building archive: {args.sessions} sessions, {args.archive_gb:g} GB ...")
    t0 = time.monotonic()
    meta = synth.write_archive(
        base / "home/.claude/projects", args.sessions, args.workspaces, total
    )
    meta["build_s"] = round(time.monotonic() - t0, 1)
    stamp.write_text(json.dumps(meta))
    return base / "home", meta


def drop_page_cache() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


async def cold_start(root: Path, args: argparse.Namespace) -> dict:
    home, meta = archive(args)
    out: dict[str, Any] = {"archive": meta}
    out["page_cache_dropped"] = drop_page_cache()
    port = peers.free_port()
    argv = peers.ours_argv(home, port)
    argv[argv.index("--runtime-dir") + 1] = str(root / "cold-runtime")
    argv[argv.index("--data-dir") + 1] = str(root / "cold-data")
    lf = (root / "cold.log").open("wb")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=peers._env(home, {"SIDEMIRROR_TOKEN": peers.TOKEN}),
        stdout=lf,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    rss = client.RssSampler(proc.pid, 0.02)
    rss.start()
    time.sleep(0.3)  # let the interpreter start before py-spy attaches
    spy = prof.Profile(proc.pid, _pfile(args, "cold-start"), 15)
    url = f"http://127.0.0.1:{port}/api/workspaces"
    try:
        listed = None
        async with aiohttp.ClientSession() as s:
            while time.monotonic() - t0 < args.cold_timeout:
                if proc.poll() is not None:
                    return {
                        **out,
                        "error": f"exited {proc.returncode}: {peers.tail_log(root / 'cold.log')}",
                    }
                try:
                    async with s.get(url, headers=peers.AUTH) as r:
                        if r.status == 200:
                            data = await r.json()
                            if len(data["workspaces"]) >= meta["workspaces"]:
                                listed = time.monotonic() - t0
                                break
                except (aiohttp.ClientError, OSError):
                    pass
                await asyncio.sleep(0.02)
            if listed is None:
                return {**out, "error": f"not listed within {args.cold_timeout} s"}
            out["cold_listed_s"] = round(listed, 3)
            spy.finish()
            warm = []
            for _ in range(6):
                t = time.monotonic()
                async with s.get(url, headers=peers.AUTH) as r:
                    await r.read()
                warm.append((time.monotonic() - t) * 1000)
            out["warm_second_request_ms"] = round(warm[0], 2)
            out["warm_median_ms"] = round(sorted(warm)[len(warm) // 2], 2)
            await asyncio.sleep(1.0)
            out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
            out["rss_after_mb"] = round(rss.rss() / 2**20, 1)
            # 6. idle CPU with these session files watched
            await asyncio.sleep(2.0)
            c0, w0 = client.cpu_seconds(proc.pid), time.monotonic()
            spy = prof.Profile(proc.pid, _pfile(args, "idle"), args.idle_s, rate=100)
            await asyncio.sleep(args.idle_s)
            spy.finish()
            c1, w1 = client.cpu_seconds(proc.pid), time.monotonic()
            out["idle"] = {
                "seconds": round(w1 - w0, 1),
                "files_watched": meta["sessions"],
                "cpu_percent": round(100 * (c1 - c0) / (w1 - w0), 3),
            }
    finally:
        rss.stop_flag.set()
        peers.stop(proc)
    return out


# --- 4. snapshot of a big transcript -------------------------------------------------------


def big_transcript(mb: int) -> Path:
    path = DATA / f"transcript-{mb}MB.jsonl"
    if not path.exists():
        log(f"building a {mb} MB transcript ...")
        tmp = path.with_suffix(".tmp")
        synth.write_transcript(tmp, SESSION, mb * 2**20)
        tmp.rename(path)
    return path


async def snapshot(root: Path, mb: int, args: argparse.Namespace) -> dict:
    src = big_transcript(mb)
    home = fresh_home(root, f"snap{mb}")
    dst = home / ".claude/projects" / PROJECT / f"{SESSION}.jsonl"
    dst.parent.mkdir(parents=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
    out: dict[str, Any] = {"bytes": src.stat().st_size}
    out.update(await _snapshot_run(home, mb, args, "snapshot"))
    # The same server started again on the same data dir: the merge journal is replayed.
    again = await _snapshot_run(home, mb, args, "restart")
    keep = ("first_snapshot_ms", "peak_rss_mb", "skipped_bytes", "error")
    out["restart"] = {k: again[k] for k in keep if k in again}
    return out


async def _snapshot_run(home: Path, mb: int, args: argparse.Namespace, tag: str) -> dict:
    out: dict[str, Any] = {}
    with peers.start_ours(home) as run:
        rss = client.RssSampler(run.proc.pid, 0.02)
        rss.start()
        try:
            out["listening_s"] = round(await peers.wait_http(run.base + "/health", run.proc, 60), 3)
            async with aiohttp.ClientSession() as s:
                async with s.get(run.base + "/api/workspaces", headers=peers.AUTH) as r:
                    ws = (await r.json())["workspaces"][0]["id"]
                url = f"{run.base}/workspace/{ws}/session?session={SESSION}&limit=200"
                times = []
                spy = prof.Profile(run.proc.pid, _pfile(args, f"{tag}-{mb}MB"), 10)
                for _ in range(3):
                    t = time.monotonic()
                    timeout = aiohttp.ClientTimeout(total=args.snapshot_timeout)
                    async with s.get(url, headers=peers.AUTH, timeout=timeout) as r:
                        body = await r.json()
                    times.append(round((time.monotonic() - t) * 1000, 1))
                spy.finish()
                out["first_snapshot_ms"] = times[0]
                out["warm_snapshot_ms"] = min(times[1:])
                out["items_total"] = body.get("total")
                out["items_returned"] = len(body.get("items", []))
                out["skipped_bytes"] = body.get("skipped_bytes")  # read from a sync point
                out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
                out["rss_after_mb"] = round(rss.rss() / 2**20, 1)
        except (TimeoutError, RuntimeError, aiohttp.ClientError) as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
            out["peak_rss_mb"] = round(rss.peak / 2**20, 1)
        finally:
            rss.stop_flag.set()
    return out


# --- 5. fanout -----------------------------------------------------------------------------


async def fanout(root: Path, args: argparse.Namespace) -> dict:
    home = fresh_home(root, "fanout")
    path = home / ".claude/projects" / PROJECT / f"{SESSION}.jsonl"
    synth.seed_session(path, SESSION)
    factory = synth.LineFactory(SESSION, short=True)
    out: dict[str, Any] = {"clients": args.clients, "target_events_per_s": args.fanout_rate}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 60)
        url = await peers.ours_stream_url(run, SESSION)
        watchers = [
            client.SseWatcher(url, peers.AUTH, b"event: snapshot") for _ in range(args.clients)
        ]
        stop = asyncio.Event()
        conn = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=conn) as session:
            tasks, error = await client.start_watchers(session, watchers, stop, 60)
            if error:
                return {**out, "error": error}
            per_write = max(1, args.fanout_rate // 100)  # one write every 10 ms
            count = args.fanout_rate * args.fanout_s
            app = client.Appender(path, factory.line, count, 0.01, per_write=per_write)
            me = os.getpid()
            c0, m0, w0 = client.cpu_seconds(run.proc.pid), client.cpu_seconds(me), time.monotonic()
            spy = prof.Profile(run.proc.pid, _pfile(args, "fanout"), args.fanout_s)
            app.start()
            while app.is_alive() and time.monotonic() - w0 < args.fanout_s + 30:
                await asyncio.sleep(0.05)
            app.stop_flag.set()
            wrote_s = time.monotonic() - w0
            deadline = time.monotonic() + args.grace
            wanted = len(app.sent)
            while time.monotonic() < deadline and any(len(w.seen.first) < wanted for w in watchers):
                await asyncio.sleep(0.05)
            w1 = time.monotonic()
            c1, m1 = client.cpu_seconds(run.proc.pid), client.cpu_seconds(me)
            spy.finish()
            stop.set()
            for t in tasks:
                t.cancel()
        lat: list[float] = []
        delivered = 0
        last_seen = w0
        for w in watchers:
            for n, t in w.seen.first.items():
                if n in app.sent:
                    lat.append(t - app.sent[n])
                    last_seen = max(last_seen, t)
            delivered += len(w.seen.first)
        span = max(last_seen - w0, 1e-6)
        s = client.summary_ms(lat, wanted * args.clients)
        out.update(
            {
                "events_written": wanted,
                "write_seconds": round(wrote_s, 2),
                "written_per_s": round(wanted / wrote_s, 0),
                "delivered": delivered,
                "delivered_per_s": round(delivered / span, 0),
                "resets": sum(w.resets for w in watchers),
                "complete_clients": sum(1 for w in watchers if len(w.seen.first) >= wanted),
                "p50_ms": s["p50_ms"],
                "p99_ms": s["p99_ms"],
                "max_ms": s["max_ms"],
                "missed": s["missed"],
                "server_cpu_percent": round(100 * (c1 - c0) / (w1 - w0), 1),
                "bench_client_cpu_percent": round(100 * (m1 - m0) / (w1 - w0), 1),
            }
        )
    return out


def _pfile(args: argparse.Namespace, name: str) -> Path | None:
    return Path(args.profile) / f"{name}.txt" if args.profile else None


# --- reporting -----------------------------------------------------------------------------


def machine() -> dict:
    model = "?"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    import psutil

    osname = platform.platform()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip('"') + f" (kernel {platform.release()})"
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "os": osname,
    }


def ratio(peer: float | None, ours: float | None) -> str:
    if peer is None or ours is None or ours <= 0:
        return "—"
    return f"{peer / ours:.1f}×"


def fmt(x: Any, unit: str = "") -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        x = f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"
    return f"{x}{unit}"


PHASES = (
    ("steady_5_per_s", "append→event @5/s"),
    ("burst_100_per_s", "append→event @100/s bursts"),
)


def table(res: dict) -> str:
    lat = res.get("latency", {})
    peer_names = [p for p in ("vibedeck", "claude-code-log") if p in lat]
    head = (
        "| measurement | sidemirror | " + " | ".join(f"{p} | {p}/ours" for p in peer_names) + " |"
    )
    sep = "|" + "---|" * (2 + 2 * len(peer_names))
    rows = [head, sep]
    ours = lat.get("sidemirror", {})
    for phase, label in PHASES:
        for q in ("p50_ms", "p90_ms", "p99_ms"):
            o = ours.get(phase, {}).get(q)
            cells = [f"{label} {q[:3]}", fmt(o, " ms")]
            for p in peer_names:
                v = lat[p].get(phase, {}).get(q) if "error" not in lat[p] else None
                cells += [fmt(v, " ms") if "error" not in lat[p] else "did not run", ratio(v, o)]
            rows.append("| " + " | ".join(cells) + " |")
        cells = [f"{label} missed", fmt(ours.get(phase, {}).get("missed"))]
        for p in peer_names:
            cells += [fmt(lat[p].get(phase, {}).get("missed")), ""]
        rows.append("| " + " | ".join(cells) + " |")
    cells = ["RSS during latency runs (peak)", fmt(ours.get("peak_rss_mb"), " MB")]
    for p in peer_names:
        v = lat[p].get("peak_rss_mb")
        cells += [fmt(v, " MB"), ratio(v, ours.get("peak_rss_mb"))]
    rows.append("| " + " | ".join(cells) + " |")
    wake = res.get("machine_floor")
    if wake:
        cells = ["machine floor: waking an idle process via a pipe, p50 / p90 (one of two hops)"]
        cells += [f"{fmt(wake['p50_ms'])} / {fmt(wake['p90_ms'])} ms"]
        cells += [""] * (2 * len(peer_names))
        rows.append("| " + " | ".join(cells) + " |")
    cells = ["load average (1 min) after the steady / burst phases"]
    for who in [ours, *(lat[p] for p in peer_names)]:
        loads = [fmt(who.get(phase, {}).get("loadavg_1m")) for phase, _ in PHASES]
        cells += [" / ".join(loads)] + ([""] if who is not ours else [])
    rows.append("| " + " | ".join(cells) + " |")
    blank = [""] * (2 * len(peer_names))

    def row(label: str, value: str) -> None:
        rows.append("| " + " | ".join([label, value, *blank]) + " |")

    rend = res.get("rendered", {})
    if rend:
        if "error" in rend:
            row("append→rendered in the side panel", "error: " + rend["error"][:60])
        else:
            r, f = rend["append_to_rendered"], rend["append_to_next_frame"]
            tag = f"@{rend['rate_per_s']:g}/s, {r['n']} of {r['expected']}"
            row(
                f"append→rendered in the side panel ({tag}) p50 / p90 / p99",
                f"{fmt(r['p50_ms'])} / {fmt(r['p90_ms'])} / {fmt(r['p99_ms'])} ms",
            )
            row(
                "append→next frame after insertion p50 / p99",
                f"{fmt(f['p50_ms'])} / {fmt(f['p99_ms'])} ms",
            )
    md = res.get("markdown", {})
    if "error" in md:
        row("Markdown of a long reply in the side panel", "error: " + md["error"][:60])
    for size, m in md.get("sizes", {}).items():
        row(
            f"Markdown of a {int(size) // 1000}k-char reply, rendered / as plain text",
            f"{fmt(m['markdown_ms'])} / {fmt(m['plain_ms'])} ms",
        )
    cold = res.get("cold_start", {})
    if cold:
        a = cold.get("archive", {})
        tag = f"{a.get('sessions')} sessions / {a.get('bytes', 0) / 2**30:.2f} GB"
        if "error" in cold:
            row(f"cold start, {tag}", "error: " + cold["error"][:60])
        else:
            row(
                f"cold start → /api/workspaces lists all ({tag})",
                fmt(cold.get("cold_listed_s"), " s"),
            )
            row(
                "warm /api/workspaces (second request)",
                fmt(cold.get("warm_second_request_ms"), " ms"),
            )
            row("peak RSS during cold start", fmt(cold.get("peak_rss_mb"), " MB"))
            idle = cold.get("idle", {})
            row(
                f"idle CPU over {idle.get('seconds')} s, {idle.get('files_watched')} files",
                fmt(idle.get("cpu_percent"), " %"),
            )
    for key, snap in res.get("snapshot", {}).items():
        if "error" in snap:
            row(f"snapshot latest 200 of {key}", "error: " + snap["error"][:60])
            continue
        row(
            f"snapshot latest 200 of {key}: first response",
            fmt(snap.get("first_snapshot_ms"), " ms"),
        )
        row(f"snapshot of {key}: warm", fmt(snap.get("warm_snapshot_ms"), " ms"))
        row(f"snapshot of {key}: peak RSS", fmt(snap.get("peak_rss_mb"), " MB"))
        restart = snap.get("restart", {})
        first, peak = restart.get("first_snapshot_ms"), restart.get("peak_rss_mb")
        row(
            f"snapshot of {key} after a restart (journal replayed): first response / peak RSS",
            f"{fmt(first, ' ms')} / {fmt(peak, ' MB')}",
        )
    for label, value in archive_phase.rows(res.get("archive", {})):
        row(label, value)
    for label, value in fleet_phase.rows(res.get("fleet")):
        row(label, value)
    fo = res.get("fanout")
    if fo:
        if "error" in fo:
            row("fanout", "error: " + fo["error"][:60])
        else:
            tag = f"{fo['clients']} clients × {fo['target_events_per_s']}/s"
            row(
                f"fanout {tag}: delivered/s (target {fo['clients'] * fo['target_events_per_s']})",
                fmt(fo.get("delivered_per_s")),
            )
            row(f"fanout {tag}: p50 / p99", f"{fmt(fo.get('p50_ms'))} / {fmt(fo.get('p99_ms'))} ms")
            row(
                f"fanout {tag}: missed / complete clients",
                f"{fo.get('missed')} / {fo.get('complete_clients')}",
            )
            server_cpu = fo.get("server_cpu_percent")
            client_cpu = fo.get("bench_client_cpu_percent")
            row(
                f"fanout {tag}: server CPU (bench client CPU)",
                f"{fmt(server_cpu)} % ({fmt(client_cpu)} %)",
            )
    rows += forward.rows(res.get("forward"), blank)
    rows += panel.rows(res.get("panel"), blank)
    rows += session_list.rows(res.get("sessionlist"), blank)
    rows += hook_cost.rows(res.get("hook"), blank)
    rows += search_scale.rows(res.get("search"), blank)
    rows += line_cost.rows(res.get("linecost"), blank)
    return "\n".join(rows)


def save(res: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2))


async def main(args: argparse.Namespace) -> None:
    res: dict[str, Any] = {
        "machine": machine(),
        "args": vars(args),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    only = set(args.only.split(",")) if args.only else None
    want = lambda k: only is None or k in only  # noqa: E731

    async def phase(key: str, measure: Awaitable[Any]) -> None:
        """One section: say what it measures, run it, then show and save its result."""
        log(SAYS[key].format(args=args))
        res[key] = await measure
        log(f"  {res[key]}")
        save(res)

    with tempfile.TemporaryDirectory(prefix="sm-bench-") as tmp:
        root = Path(tmp)
        if want("latency"):
            res["latency"] = {}
            tools: list[tuple[str, Starter]] = [("sidemirror", peers.start_ours)]
            for name, starter in (
                ("vibedeck", peers.start_vibedeck),
                ("claude-code-log", peers.start_claude_code_log),
            ):
                if name in args.skip_peers:
                    continue
                if not peers.PEER_DIRS[name].exists():
                    res["latency"][name] = {"error": f"not installed ({peers.PEER_DIRS[name]})"}
                    log(f"{name}: not installed, skipped")
                    continue
                tools.append((name, starter))
            res["machine_floor"] = floor.idle_wake()
            log(f"machine floor, waking an idle process: {res['machine_floor']}")
            for name, starter in tools:
                log(f"latency: {name}")
                try:
                    res["latency"][name] = await latency(name, starter, root, args)
                except Exception as exc:
                    res["latency"][name] = {"error": f"{type(exc).__name__}: {exc}"}
                if "error" in res["latency"][name]:
                    log(f"  {name} could not be measured: {res['latency'][name]['error']}")
                save(res)
        if want("rendered"):
            await phase("rendered", rendered.rendered(root, args, SESSION))
        if want("markdown"):
            await phase("markdown", md_render.markdown(root))
        if want("cold"):
            await phase("cold_start", cold_start(root, args))
        if want("archive"):
            sizes = [int(n) for n in args.archive_sessions.split(",") if n]
            res["archive"] = await archive_phase.phase(root, DATA, sizes, args, log)
            save(res)
        if want("snapshot"):
            res["snapshot"] = {}
            for mb in args.snapshot_mb:
                log(f"snapshot: {mb} MB transcript")
                res["snapshot"][f"{mb} MB"] = await snapshot(root, mb, args)
                log(f"  {res['snapshot'][f'{mb} MB']}")
                save(res)
        if want("export"):
            transcript = export_memory.transcript_of(DATA, SESSION, args.export_mb)
            home = fresh_home(root, "export")
            formats = args.export_formats.split(",")
            measure = export_memory.measure(transcript, home, SESSION, PROJECT, formats)
            await phase("export", measure)
        if want("forward"):
            await phase("forward", forward.forward(root, args.forward_mb, args.appends, args.rate))
        if want("review"):
            await phase("review", review.review(root, args))
        if want("search"):
            await phase("search", search_scale.measure(root, args.search_mb, args.search_sessions))
        if want("hook"):
            await phase("hook", hook_cost.measure(root))
        if want("cli"):
            await phase("cli", asyncio.to_thread(cli_startup.cli_startup))
        if want("panel"):
            await phase("panel", panel.panel(args))
        if want("sessionlist"):
            await phase("sessionlist", session_list.session_list(args))
        if want("agentscan"):
            await phase("agent_scan", asyncio.to_thread(agent_scan.measure))
        if want("fleet"):
            log(f"fleet: {fleet_phase.SESSIONS} sessions at 20 lines/s for {args.fleet_seconds} s")
            res["fleet"] = await fleet_phase.fleet(
                root, args.fleet_seconds, args.skip_peers, log, _pfile(args, "fleet")
            )
            save(res)
        if want("linecost"):
            await phase("linecost", line_cost.measure(root))
        if want("fanout"):
            await phase("fanout", fanout(root, args))
    res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    save(res)
    print()
    print(table(res))
    print(f"\nresults: {RESULTS}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--full", action="store_true", help="the issue's sizes")
    p.add_argument(
        "--only",
        default="",
        help="comma list: latency,rendered,markdown,cold,archive,snapshot,fanout,forward,"
        "review,search,cli,panel,sessionlist,agentscan,hook,fleet,linecost,export",
    )
    p.add_argument("--panel-items", type=int, default=50_000, help="panel phase: session size")
    p.add_argument("--panel-appends", type=int, default=200, help="panel phase: live appends")
    p.add_argument(
        "--list-sessions", type=int, default=10_000, help="sessionlist phase: sessions listed"
    )
    p.add_argument(
        "--list-workspaces", type=int, default=400, help="sessionlist phase: their workspaces"
    )
    p.add_argument(
        "--archive-sessions",
        default=None,
        help="archive phase sizes, comma list (default 1000; 1000,10000 with --full)",
    )
    p.add_argument("--archive-idle-s", type=float, default=5.0)
    p.add_argument("--skip-peers", default="", help="comma list of peers not to run")
    p.add_argument("--appends", type=int, default=200, help="appends per latency phase")
    p.add_argument("--rate", type=float, default=5.0, help="steady appends per second")
    p.add_argument("--burst", type=int, default=50, help="lines per 100/s burst (1 s apart)")
    p.add_argument("--grace", type=float, default=15.0, help="max wait for late events (s)")
    p.add_argument("--ccl-poll-ms", type=int, default=1000, help="claude-code-log page poll")
    p.add_argument("--archive-gb", type=float, default=None)
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--workspaces", type=int, default=50)
    p.add_argument("--cold-timeout", type=float, default=300.0)
    p.add_argument("--idle-s", type=float, default=None)
    p.add_argument("--snapshot-mb", type=int, nargs="*", default=None)
    p.add_argument("--snapshot-timeout", type=float, default=300.0)
    p.add_argument("--profile", default="", help="dir: py-spy the server in measured windows")
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--fanout-rate", type=int, default=2000)
    p.add_argument("--fanout-s", type=int, default=None)
    p.add_argument("--search-mb", type=int, default=None, help="search phase: archive size")
    p.add_argument("--search-sessions", type=int, default=None, help="search phase: sessions")
    p.add_argument("--fleet-seconds", type=float, default=300.0, help="fleet phase: duration")
    p.add_argument("--forward-mb", type=int, default=100, help="transcript sent by `forward`")
    p.add_argument("--export-mb", type=int, default=None, help="export phase: session size")
    p.add_argument("--export-formats", default="html,md,jsonl", help="export phase: formats")
    a = p.parse_args(argv)
    a.archive_gb = a.archive_gb if a.archive_gb is not None else (2.0 if a.full else 0.2)
    a.idle_s = a.idle_s if a.idle_s is not None else (60.0 if a.full else 20.0)
    a.snapshot_mb = (
        a.snapshot_mb if a.snapshot_mb is not None else ([100, 1024] if a.full else [100])
    )
    a.export_mb = a.export_mb or (1024 if a.full else 256)
    a.fanout_s = a.fanout_s if a.fanout_s is not None else (30 if a.full else 10)
    a.search_mb = a.search_mb or (2048 if a.full else 100)
    a.search_sessions = a.search_sessions or (1000 if a.full else 100)
    a.skip_peers = [s for s in a.skip_peers.split(",") if s]
    if a.archive_sessions is None:
        a.archive_sessions = "1000,10000" if a.full else "1000"
    return a


if __name__ == "__main__":
    asyncio.run(main(parse()))
