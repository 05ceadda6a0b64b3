"""The fleet soak (issue 34): 20 live agents for hours, streams opened and dropped all along.

A real `sidemirror serve` reads 20 sessions, 13 Claude Code transcripts and 7 Codex rollouts
(every third one, as bench/fleet.py seeds them), each appended at 20 real-shaped lines a second
(400 lines/s in all) for `SOAK_FLEET_SECONDS` (default 7200: two hours). Each line carries its
marker; session i's lines are markers i × STRIDE, i × STRIDE + 1, ...

Meanwhile (tests/reliability/fleet_streams.py): three streams follow one session each for the
whole run (two Claude, one Codex), hanging up every 10 s to 5 min, half the time in the middle of
a message, and resuming with `Last-Event-ID`; the attention stream is open; every 1–4 s a stream
is opened on a random session (or the attention stream), read for up to 12 s and dropped, a third
of them mid-message; the workspace and session lists are read every 3–12 s. The server's RSS and
open descriptors are sampled every 30 s (every SECONDS/24 in a short run, at least 5 s) and each
sample is appended to $RELIABILITY_REPORT at once, so a run cut short still leaves its figures.

At the end, with every stream closed:
- each followed session's every marker was seen exactly once, in order, on its stream, with no
  `reset` (a resume from a held id must give exactly the items after it, docs/api.md);
- every line written was delivered (the same check: a followed session's markers are its lines);
- RSS flat after the warm-up (10 min, or a quarter of a short run): growth from the warm-up
  sample to the end ≤ 10 MB + 16 B per line appended meanwhile. The 16 B is what the server keeps
  by design for every item, spilled ones too (item_log.py: an 8-byte spill offset and an 8-byte
  seq); everything else it holds is bounded (a window of items per session, a shared budget of
  held items, the search index on disk), so anything that grows with time or with the streams
  opened shows past the 10 MB: 10 MB is about 1/8 of the server's RSS under this load, well above
  the noise of the allocator's arenas between two samples (±2–3 MB in the bench's runs) and well
  below what a leak per line (~150,000 lines a session in two hours) or per stream (~3,000
  opened) would add;
- open descriptors flat: the end (no stream open) ≤ the warm-up sample (streams open) + 8;
- the server alive, no traceback in its log, no client error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import pytest

from tests.harness.agent_lines import CodexLines, LineFactory, seed_codex, seed_session
from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server
from tests.harness.waiting import until

from .fleet_streams import Churn, Follower, Poller
from .report import record
from .test_crash_restart import ws_id

SECONDS = float(os.environ.get("SOAK_FLEET_SECONDS", "7200"))
WARM_UP = min(600.0, SECONDS / 4)
SAMPLE_EVERY = min(30.0, max(5.0, SECONDS / 24))
SESSIONS, CODEX_EVERY, RATE = 20, 3, 20.0
STRIDE = 400_000  # markers have 7 digits: 20 sessions × 400,000 lines fit (5.5 hours)
RSS_SLACK = 10 << 20
ITEM_INDEX_BYTES = 16
FD_SLACK = 8
SEED = int(os.environ.get("RELIABILITY_SEED", "34"))


@dataclass
class Agent:
    kind: str
    sid: str
    cwd: str
    path: Path
    make: Callable[[int], bytes]
    first: int
    written: int = 0


def _fleet(server: Server) -> list[Agent]:
    """The 20 sessions, seeded with a recorded session's history."""
    out = []
    for i in range(SESSIONS):
        cwd = f"/home/soak/fleet/agent-{i:02d}"
        sid = str(uuid.UUID(int=0x5E551000_0000_4000_8000_000000F1EE00 + i))
        if i % CODEX_EVERY == 1:
            path = seed_codex(server.codex, sid, cwd)
            out.append(Agent("codex", sid, cwd, path, CodexLines().line, i * STRIDE))
        else:
            path = server.claude / cwd.replace("/", "-") / f"{sid}.jsonl"
            seed_session(path, sid, cwd)
            out.append(Agent("claude", sid, cwd, path, LineFactory(sid, cwd).line, i * STRIDE))
    return out


class Writer(threading.Thread):
    """Every 1/RATE s, one line to each agent (one `write()` each), until `seconds` are over."""

    def __init__(self, agents: list[Agent], seconds: float) -> None:
        super().__init__(daemon=True)
        self.agents, self.seconds = agents, seconds
        self.stop = threading.Event()
        self.elapsed = 0.0

    def run(self) -> None:
        fds = [os.open(a.path, os.O_WRONLY | os.O_APPEND) for a in self.agents]
        try:
            next_t = time.monotonic()
            end = next_t + self.seconds
            while not self.stop.is_set() and time.monotonic() < end:
                for fd, a in zip(fds, self.agents, strict=True):
                    os.write(fd, a.make(a.first + a.written))
                    a.written += 1
                next_t += 1 / RATE
                time.sleep(max(0.0, next_t - time.monotonic()))
        finally:
            self.elapsed = time.monotonic() - (end - self.seconds)
            for fd in fds:
                os.close(fd)


def _probe(server: Server, agents: list[Agent], t0: float) -> dict[str, Any]:
    assert server.proc is not None
    proc = psutil.Process(server.proc.pid)
    memory = proc.memory_info()
    return {
        "t": round(time.monotonic() - t0, 1),
        "rss": memory.rss,
        "rss_shared": memory.shared,  # file-backed pages (the spill files' and the index's)
        "fds": proc.num_fds(),
        "lines": sum(a.written for a in agents),
        "streams": server.health()["streams"],
    }


async def _sampler(
    server: Server, agents: list[Agent], t0: float, out: list[dict[str, Any]]
) -> None:
    while True:
        sample = await asyncio.to_thread(_probe, server, agents, t0)
        out.append(sample)
        record("fleet soak: sample", {**sample, "kind": "sample"}, trials=1)
        await asyncio.sleep(SAMPLE_EVERY)


async def _soak(server: Server) -> dict[str, Any]:
    rng = random.Random(SEED)
    agents = _fleet(server)
    listed = lambda: {w["directory"] for w in server.workspaces()} >= {a.cwd for a in agents}  # noqa: E731
    # Blocking reads are fine here and at the end: no stream is open for the loop to serve.
    await until(listed, 120, "the fleet's workspaces listed")
    stream = "/workspace/{}/session/stream?session={}"
    urls = [server.url(stream.format(ws_id(a.cwd), a.sid)) for a in agents]
    attention = server.url("/api/attention/stream")
    followed = [i for i, a in enumerate(agents) if a.kind == "claude"][:2]
    followed += [i for i, a in enumerate(agents) if a.kind == "codex"][:1]
    drop_every = (10.0, max(20.0, min(300.0, SECONDS / 3)))
    followers = [Follower(urls[i], agents[i].first, rng, drop_every) for i in followed]
    holder = Follower(attention, -1, rng, (1e9, 1e9))  # the attention stream, never dropped
    churn = Churn([*urls, attention], rng)
    lists = ["/api/workspaces", "/api/sessions"] + [
        f"/workspace/{ws_id(a.cwd)}/sessions" for a in agents
    ]
    poller = Poller(lists, rng)
    samples: list[dict[str, Any]] = []
    writer = Writer(agents, SECONDS)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        tasks = [asyncio.create_task(f.run(http)) for f in [*followers, holder]]
        try:
            for f in followers:  # the snapshot came: subscribed before the first line
                await until(f.ready.is_set, 60, f"the stream of {f.url} ready")
            t0 = time.monotonic()
            tasks.append(asyncio.create_task(_sampler(server, agents, t0, samples)))
            tasks += [
                asyncio.create_task(churn.run(http)),
                asyncio.create_task(poller.run(http, server.base)),
            ]
            writer.start()
            await asyncio.to_thread(writer.join, SECONDS + 600)
            assert not writer.is_alive(), "the writer did not finish"
            last = [agents[i].first + agents[i].written - 1 for i in followed]
            caught_up = lambda: all(n in f.seen for f, n in zip(followers, last, strict=True))  # noqa: E731
            with contextlib.suppress(AssertionError):  # what is missing is counted below
                await until(caught_up, 120, "every followed stream has its session's last line")
        finally:
            writer.stop.set()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    await until(lambda: server.health()["streams"] == 0, 30, "every stream released")
    end = await asyncio.to_thread(_probe, server, agents, t0)
    record("fleet soak: sample", {**end, "kind": "sample", "end": True}, trials=1)
    warm = next((s for s in samples if s["t"] >= WARM_UP), samples[-1])
    after_warm = end["lines"] - warm["lines"]
    result = {
        "seconds": SECONDS,
        "warm_up_s": WARM_UP,
        "sessions": SESSIONS,
        "lines_written": end["lines"],
        "lines_per_s": round(end["lines"] / max(1.0, writer.elapsed)),
        "rss_before": samples[0]["rss"],
        "rss_warm": warm["rss"],
        "rss_after": end["rss"],
        "rss_max": max(s["rss"] for s in [*samples, end]),
        "rss_growth_after_warm_up": end["rss"] - warm["rss"],
        "rss_bound": RSS_SLACK + ITEM_INDEX_BYTES * after_warm,
        "rss_per_line_after_warm_up": round((end["rss"] - warm["rss"]) / max(1, after_warm)),
        "rss_shared_warm": warm["rss_shared"],
        "rss_shared_end": end["rss_shared"],
        "fds_start": samples[0]["fds"],
        "fds_warm": warm["fds"],
        "fds_end": end["fds"],
        "fds_max": max(s["fds"] for s in [*samples, end]),
        "streams_opened": churn.opened + sum(f.connects for f in [*followers, holder]),
        "streams_dropped": churn.dropped + sum(f.drops for f in followers),
        "mid_message_drops": churn.mid_message_drops + sum(f.mid_message_drops for f in followers),
        "list_polls": poller.polls,
        "followed": {
            f"{agents[i].kind}-{i:02d}": {
                "written": agents[i].written,
                "seen": len(f.seen),
                "missing": f.missing(agents[i].written),
                "duplicates": f.duplicates,
                "out_of_order": f.out_of_order,
                "resets": f.resets,
                "reconnects": f.connects - 1,
            }
            for f, i in zip(followers, followed, strict=True)
        },
        "errors": [
            *churn.errors,
            *poller.errors,
            *(e for f in [*followers, holder] for e in f.errors),
        ][:20],
    }
    result["lost"] = sum(f["missing"] for f in result["followed"].values())
    result["duplicates"] = sum(f["duplicates"] for f in result["followed"].values())
    result["crashes"] = 0 if server.alive() else 1
    record(
        f"fleet soak: 20 sessions × 20 lines/s, streams dropped, {SECONDS:g} s", result, trials=1
    )
    return result


@pytest.mark.soak
@pytest.mark.timeout(SECONDS + 1800)  # over scripts/soak's 30 min per test: the run itself, + slack
async def test_fleet_soak(tmp_path: Path) -> None:
    with Server(tmp_path, ready="ok") as server:
        result = await _soak(server)
        log = server.stderr()
        assert server.alive(), log[-3000:]
    for name, f in result["followed"].items():
        assert f["written"] > 0 and f["missing"] == 0, (name, result)
        assert f["duplicates"] == 0 and f["out_of_order"] == 0 and f["resets"] == 0, (name, result)
    assert not result["errors"], result
    assert result["lines_per_s"] >= 0.8 * SESSIONS * RATE, result  # a real load, not a trickle
    assert result["rss_growth_after_warm_up"] <= result["rss_bound"], result
    assert result["fds_end"] <= result["fds_warm"] + FD_SLACK, result
    assert not unexpected_tracebacks(log), log[-3000:]
