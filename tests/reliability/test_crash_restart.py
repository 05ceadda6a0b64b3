"""`kill -9` of the real server while a transcript grows, sessions are ingested and browse
activity is reported, with 5 SSE clients per stream resuming by their last id after each restart.

Every client must end with exactly the items of a fresh snapshot (no loss, no duplicate, order
preserved), and that snapshot must be exactly what a clean parse of the whole transcript gives
(the crashes lost nothing on the way in either).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from tests.harness.auth import AUTH
from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server
from tests.harness.waiting import until, wait_until
from tests.reliability.harness import (
    LONG_SESSION,
    MID_SESSION,
    Mirror,
    canon,
    check_mirrors,
    fixture_lines,
    mirrors_converged,
)

from .oracle import clean_parse
from .oracle import without_id as _no_id
from .report import record

CLIENTS = 5
WS_DIR = "/home/dev/crash-project"
INGEST_SESSION = "crash-ingest"


def ws_id(directory: str) -> str:
    return hashlib.sha256(directory.encode()).hexdigest()[:12]


async def _writer(path: Path, data: bytes, rng: random.Random, duration: float) -> None:
    """Append `data` in random-sized chunks (lines torn across writes) over about `duration`."""
    pos, chunks = 0, []
    while pos < len(data):
        n = rng.choice([64, 500, 2000, 8000, 30000])
        chunks.append(data[pos : pos + n])
        pos += n
    pause = duration / max(1, len(chunks))
    with path.open("ab") as fh:
        for chunk in chunks:
            fh.write(chunk)
            fh.flush()
            await asyncio.sleep(pause * rng.uniform(0.2, 1.8))


async def _poster(server: Server, count: int, duration: float, kind: str) -> int:
    """One event (or activity entry) per request; a request cut by a crash is re-sent only if
    the restarted server does not have it, so every acknowledged item must survive exactly once."""
    resent = 0
    for i in range(count):
        marker = f"{kind}-{i:05d}"
        while True:
            try:
                await asyncio.to_thread(_post_one, server, kind, marker)
                break
            except (urllib.error.URLError, OSError, ConnectionError):
                await asyncio.sleep(0.05)
                try:
                    present = await asyncio.to_thread(_has_marker, server, kind, marker)
                except (urllib.error.URLError, OSError, ConnectionError):
                    continue
                if present:
                    break
                resent += 1
        await asyncio.sleep(duration / count)
    return resent


def _post_one(server: Server, kind: str, marker: str) -> None:
    if kind == "ingest":
        result = server.ingest(WS_DIR, INGEST_SESSION, [{"type": "assistant", "content": marker}])
        assert result["accepted"] == 1, result
    else:
        import urllib.request

        body = json.dumps(
            {
                "type": "command_end",
                "command": "click",
                "args": ["#go"],
                "result": marker,
                "workspace": WS_DIR,
            }  # fmt: skip
        ).encode()
        req = urllib.request.Request(
            server.url("/api/activity"), data=body, method="POST",
            headers={**AUTH, "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.load(resp)["accepted"] == 1


def _has_marker(server: Server, kind: str, marker: str) -> bool:
    items = _fresh_items(server, kind)
    return any(marker in (i.get("content") or i.get("result") or "") for i in items)


def _fresh_items(server: Server, kind: str) -> list[dict[str, Any]]:
    if kind == "ingest":
        try:
            items: list[dict[str, Any]] = server.snapshot(ws_id(WS_DIR), INGEST_SESSION)["items"]
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise
        return items
    return asyncio.run(_read_activity(server))


async def _read_activity(server: Server) -> list[dict[str, Any]]:
    """A fresh cursor-less activity stream: the ring replay (read until it goes quiet)."""
    m = Mirror(server, f"/activity/stream?workspace={ws_id(WS_DIR)}", "fresh", dense=True)
    stop = asyncio.Event()
    task = asyncio.create_task(m.run(stop))
    last, quiet_since = -1, time.monotonic()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        if m.frames != last:
            last, quiet_since = m.frames, time.monotonic()
        elif m.connects and time.monotonic() - quiet_since > 0.3:
            break
    stop.set()
    await asyncio.wait_for(task, 5)
    return m.items


async def crash_run(tmp: Path, *, kills: int, duration: float, seed: int,
                    transcript: Path, with_activity: bool = True) -> dict[str, Any]:  # fmt: skip
    rng = random.Random(seed)
    server = Server(tmp)
    sid = transcript.stem
    project = server.claude / "-path-to-Demo"
    project.mkdir(parents=True)
    lines = fixture_lines(transcript)
    head, rest = b"".join(lines[:4]), b"".join(lines[4:])
    path = project / transcript.name
    path.write_bytes(head)
    claude_ws = ws_id("/path/to/Demo")
    server.start()
    rss_before = server.rss()
    stop = asyncio.Event()
    try:
        server.ingest(WS_DIR, INGEST_SESSION, [{"type": "user", "content": "ingest-start"}])
        if with_activity:
            _post_one(server, "activity", "activity-start")
        wait_until(lambda: server.snapshot(claude_ws, sid)["total"] > 0, 20, "claude session")
        groups: dict[str, list[Mirror]] = {
            "claude": [
                Mirror(
                    server,
                    f"/workspace/{claude_ws}/session/stream?session={sid}&limit=10000",
                    f"claude-{n}",
                )  # fmt: skip
                for n in range(CLIENTS)
            ],
            "ingest": [
                Mirror(
                    server,
                    f"/workspace/{ws_id(WS_DIR)}/session/stream?session="
                    f"{INGEST_SESSION}&limit=10000",
                    f"ingest-{n}",
                    dense=True,
                )  # fmt: skip
                for n in range(CLIENTS)
            ],
        }
        if with_activity:
            groups["activity"] = [
                Mirror(
                    server,
                    f"/activity/stream?workspace={ws_id(WS_DIR)}",
                    f"activity-{n}",
                    dense=True,
                )
                for n in range(CLIENTS)
            ]
        tasks = [asyncio.create_task(m.run(stop)) for ms in groups.values() for m in ms]
        posts = max(20, int(duration * 25))
        work = [
            asyncio.create_task(_writer(path, rest, rng, duration)),
            asyncio.create_task(_poster(server, posts, duration, "ingest")),
        ]
        if with_activity:
            work.append(asyncio.create_task(_poster(server, posts, duration, "activity")))
        # kill -9 at random moments while everything is moving; restart on the same data dir.
        moments = sorted(rng.uniform(0.05, duration) for _ in range(kills))
        t0 = time.monotonic()
        for moment in moments:
            await asyncio.sleep(max(0.0, t0 + moment - time.monotonic()))
            server.kill()
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            await asyncio.to_thread(server.start)
        resent = await asyncio.wait_for(asyncio.gather(*work), duration * 4 + 60)
        want_claude = clean_parse(transcript)
        # Settle: the snapshot holds the whole transcript, and every client holds the snapshot.
        fresh: dict[str, list[dict[str, Any]]] = {}

        async def settled() -> bool:
            snap = (await asyncio.to_thread(server.snapshot, claude_ws, sid))["items"]
            if [_no_id(i) for i in snap] != want_claude:
                return False
            fresh["claude"] = snap
            for kind in ("ingest", "activity") if with_activity else ("ingest",):
                fresh[kind] = await asyncio.to_thread(_fresh_items, server, kind)
            return all(mirrors_converged(groups[k], fresh[k]) for k in groups)

        # Bounded: the assertions below say what differs if it never settles.
        await until(settled, 60)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        rss_after = server.rss()
        alive = server.alive()
        errors = server.stderr()
    finally:
        stop.set()
        server.stop()
    snap = fresh.get("claude", [])
    assert [_no_id(i) for i in snap] == want_claude, "the transcript's items after the crashes"
    markers = {
        "ingest": ["ingest-start"] + [f"ingest-{i:05d}" for i in range(posts)],
        "activity": ["activity-start"] + [f"activity-{i:05d}" for i in range(posts)],
    }
    for kind in ("ingest", "activity") if with_activity else ("ingest",):
        got = [i.get("content") or i.get("result") for i in fresh[kind]]
        assert got == markers[kind], f"{kind}: acknowledged items lost or duplicated"
    totals = {k: check_mirrors(ms, fresh[k]) for k, ms in groups.items()}
    result = {
        "kills": server.kills,
        "clients": sum(len(ms) for ms in groups.values()),
        "items": {k: len(v) for k, v in fresh.items()},
        "lost": sum(t["lost"] for t in totals.values()),
        "duplicates": sum(t["duplicates"] for t in totals.values()),
        "gaps": sum(t["gaps"] for t in totals.values()),
        "resets": {k: sum(m.resets for m in ms) for k, ms in groups.items()},
        "reconnects": sum(m.connects for ms in groups.values() for m in ms),
        "resent": list(resent[1:]),
        "rss_before": rss_before,
        "rss_after": rss_after,
        "crashes": 0 if alive else 1,
        "seed": seed,
    }
    for k, ms in groups.items():
        for m in ms:
            assert [canon(i) for i in m.items] == [canon(i) for i in fresh[k]], (k, m.name, result)
    assert result["lost"] == 0 and result["duplicates"] == 0 and result["gaps"] == 0, result
    # Append-only logs keep their epoch across kill -9: resuming never needs a reset.
    assert result["resets"]["claude"] == 0 and result["resets"]["ingest"] == 0, (
        result["resets"],
        [m.reset_log for m in groups["claude"]],
    )
    assert not unexpected_tracebacks(errors), errors[-3000:]
    return result


def _seed() -> int:
    return int(os.environ.get("RELIABILITY_SEED", random.randrange(1 << 30)))


async def test_kill9_while_streaming_loses_nothing(tmp_path: Path) -> None:
    seed = _seed()
    result = await crash_run(tmp_path, kills=3, duration=4.0, seed=seed, transcript=MID_SESSION)
    record("crash/restart (kill -9), fast", result, trials=result["kills"])


@pytest.mark.soak
async def test_soak_kill9_fifty_times(tmp_path: Path) -> None:
    seed = _seed()
    results = []
    for run in range(5):  # 5 runs x 10 kills = 50 kill -9 trials
        results.append(
            await crash_run(
                tmp_path / f"run{run}",
                kills=10,
                duration=25.0,
                seed=seed + run,
                transcript=LONG_SESSION,
            )  # fmt: skip
        )
    merged = {
        "kills": sum(r["kills"] for r in results),
        "lost": sum(r["lost"] for r in results),
        "duplicates": sum(r["duplicates"] for r in results),
        "crashes": sum(r["crashes"] for r in results),
        "reconnects": sum(r["reconnects"] for r in results),
        "rss_before": results[0]["rss_before"],
        "rss_after": max(r["rss_after"] for r in results),
        "items": results[-1]["items"],
        "seed": seed,
    }
    record("crash/restart (kill -9), soak", merged, trials=merged["kills"])


SUB_FIX = LONG_SESSION.parent.parent / "incremental-subagents"
SUB_SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
SUB_CWD = "/Users/User/repo/codemie-ai/codemie-code"


async def crash_run_subagents(
    tmp: Path, *, kills: int, duration: float, seed: int
) -> dict[str, Any]:
    """A session plus a sub-agent file growing concurrently: the merge order of the two files is
    an accident of timing, so ids stay valid across kill -9 only through the merge journal.
    After the crashes, a clean restart must show the very same items under the same ids."""
    rng = random.Random(seed)
    server = Server(tmp)
    project = server.claude / "-Users-User-repo-codemie-ai-codemie-code"
    (project / SUB_SID / "subagents").mkdir(parents=True)
    main = project / f"{SUB_SID}.jsonl"
    agent = project / SUB_SID / "subagents" / "agent-a485154.jsonl"
    main_lines = fixture_lines(SUB_FIX / "turn-2.jsonl")
    agent_data = (SUB_FIX / "turn-2" / "subagents" / "agent-a485154.jsonl").read_bytes()
    main.write_bytes(b"".join(main_lines[:4]))
    agent.write_bytes(b"")
    ws = ws_id(SUB_CWD)
    server.start()
    rss_before = server.rss()
    stop = asyncio.Event()
    try:
        wait_until(lambda: server.snapshot(ws, SUB_SID)["total"] > 0, 20, "session")
        path = f"/workspace/{ws}/session/stream?session={SUB_SID}&limit=10000"
        mirrors = [Mirror(server, path, f"sub-{n}") for n in range(CLIENTS)]
        tasks = [asyncio.create_task(m.run(stop)) for m in mirrors]
        work = asyncio.gather(
            _writer(main, b"".join(main_lines[4:]), rng, duration),
            _writer(agent, agent_data, random.Random(seed + 1), duration),
        )
        t0 = time.monotonic()
        for moment in sorted(rng.uniform(0.05, duration) for _ in range(kills)):
            await asyncio.sleep(max(0.0, t0 + moment - time.monotonic()))
            server.kill()
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            await asyncio.to_thread(server.start)
        await asyncio.wait_for(work, duration * 4 + 30)
        fresh: list[dict[str, Any]] = []

        async def settled() -> bool:
            nonlocal fresh
            snap = await asyncio.to_thread(server.snapshot, ws, SUB_SID)
            stable = await asyncio.to_thread(server.snapshot, ws, SUB_SID)
            fresh = snap["items"]
            return snap == stable and mirrors_converged(mirrors, fresh) and len(fresh) > 30

        await asyncio.sleep(1.0)  # past the watcher's debounce
        await until(settled, 60)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
        # A clean restart replays the merge journal: the same items under the same ids.
        server.stop()
        server.start()
        # The server answers before it has indexed the files (the session is a 404 until then).
        wait_until(lambda: _indexed(server.health()["indexing"]), 20, "the restart's index")
        after = server.snapshot(ws, SUB_SID)["items"]
        rss_after = server.rss()
        errors = server.stderr()
    finally:
        stop.set()
        server.stop()
    totals = check_mirrors(mirrors, fresh)
    result = {
        "kills": server.kills, "clients": CLIENTS, "items": len(fresh), **totals,
        "resets": sum(m.resets for m in mirrors), "rss_before": rss_before,
        "rss_after": rss_after, "crashes": 0, "seed": seed,
    }  # fmt: skip
    for m in mirrors:
        assert [canon(i) for i in m.items] == [canon(i) for i in fresh], (m.name, result)
    assert [canon(i) for i in after] == [canon(i) for i in fresh], "ids changed across a restart"
    assert totals == {"lost": 0, "duplicates": 0, "gaps": 0}, result
    assert result["resets"] == 0, (result, [m.reset_log for m in mirrors])
    assert not unexpected_tracebacks(errors), errors[-3000:]
    return result


def _indexed(progress: dict[str, int | None]) -> bool:
    return progress["total"] is not None and progress["done"] == progress["total"]


async def test_kill9_with_a_growing_subagent_keeps_ids(tmp_path: Path) -> None:
    result = await crash_run_subagents(tmp_path, kills=2, duration=3.0, seed=_seed())
    record("crash/restart (kill -9), session + sub-agent files, fast", result, trials=2)


@pytest.mark.soak
async def test_soak_kill9_with_subagents(tmp_path: Path) -> None:
    seed = _seed()
    kills = 0
    for run in range(4):
        result = await crash_run_subagents(tmp_path / f"run{run}", kills=5, duration=10.0,
                                           seed=seed + run)  # fmt: skip
        kills += result["kills"]
    record("crash/restart (kill -9), session + sub-agent files, soak", {**result, "kills": kills},
           trials=kills)  # fmt: skip
