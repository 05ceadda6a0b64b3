"""A restart on a data dir holding 10,000 ingested sessions (each in its own workspace) and
browse activity from 10,000 workspaces answers `/health` at once: journals are indexed from
their heads and replayed only when a session is first read (with the same ids and epochs), and
the activity files are read by a thread once the server answers.

The data dir is written by the server's own journal and activity log classes, in-process (the
same files 10,000 requests would leave, in a fraction of the time). The figure is the time from
spawning the server to its first `/health` answer once it serves every route (the starting
responder answers "starting" before that), beside the same for an empty data dir. What
is asserted is the server's CPU time until then, beyond the empty start's: wall time on a
loaded 2-core machine says more about the other processes than about the server (the target of
1 s wall holds on an idle one).
"""

from __future__ import annotations

import asyncio
import time
import urllib.error
from pathlib import Path

import psutil
from sidemirror.activity.log import ActivityLog
from sidemirror.core.hub import Hub
from sidemirror.core.models import AssistantEvent, UserEvent
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store, workspace_id_for
from sidemirror.ingest.journal import IngestJournal
from sidemirror.sources.base import Emitted

from tests.harness.server import Server

from .report import record

COUNT = 10_000
# Server CPU seconds the 10,000 sessions and workspaces may add to a start: 0.7 to 0.9 on an
# idle machine here, 2 before journals were indexed lazily and the activity files read once the
# server listens (CI measured 1.9 while the activity thread still shared the start).
EXTRA_CPU_BOUND_S = 1.5
# Each start is timed twice and the cheaper one kept: another process's burst only adds.
TRIALS = 2


def _directory(n: int) -> str:
    return f"/home/dev/ws-{n:05d}"


async def _fill_journal(root: Path) -> None:
    journal = IngestJournal(root)
    store = Store(Hub(), Projector(500))
    for n in range(COUNT):
        lines = [[Emitted("s", UserEvent(content=f"hello {n}"))],
                 [Emitted("s", AssistantEvent(content=f"answer {n}"), title=f"title {n}")]]  # fmt: skip
        stored, written, error = await journal.commit(store, _directory(n), "events", lines)
        assert (stored, error) == (2, None)
    journal.close()


def _fill_activity(root: Path) -> None:
    log = ActivityLog(root)
    for n in range(COUNT):
        log.report({"command": f"open {n}", "workspace": _directory(n)})
    log.close()


def _time_to_health(server: Server) -> tuple[float, float]:
    """(wall seconds from spawning the server to its first /health answer, its CPU seconds)."""
    t0 = time.monotonic()
    server.start(timeout=60)
    while True:
        try:
            server.health()
            break
        except (OSError, urllib.error.URLError):
            time.sleep(0.005)
    wall = time.monotonic() - t0
    assert server.proc is not None
    cpu = psutil.Process(server.proc.pid).cpu_times()
    return wall, cpu.user + cpu.system


def _cheapest_start(server: Server) -> tuple[float, float]:
    """(wall, CPU seconds) of the cheaper of TRIALS starts; the server is left running."""
    trials = []
    for trial in range(TRIALS):
        if trial:
            server.stop()
        trials.append(_time_to_health(server))
    return min(trials, key=lambda t: t[1])


def test_restart_with_10000_sessions_and_workspaces_answers_health_fast(tmp_path: Path) -> None:
    empty = Server(tmp_path / "empty")
    try:
        base_wall, base_cpu = _cheapest_start(empty)
    finally:
        empty.stop()

    server = Server(tmp_path / "full")
    asyncio.run(_fill_journal(server.data / "ingest"))
    _fill_activity(server.data / "activity")
    try:
        wall, cpu = _cheapest_start(server)
        health = server.health()
        # Any session reads back whole, with its ids, as a client would first see it.
        ws = workspace_id_for(_directory(4321))
        sessions = server.get(f"/workspace/{ws}/sessions")["sessions"]
        snap = server.snapshot(ws, "s")
    finally:
        server.stop()
    record(
        "restart: 10,000 ingested sessions in 10,000 workspaces + 10,000 activity workspaces",
        {
            "time_to_health_s": round(wall, 3),
            "empty_data_dir_s": round(base_wall, 3),
            "cpu_s": round(cpu, 3),
            "empty_data_dir_cpu_s": round(base_cpu, 3),
            "workspaces": health["workspaces"],
        },  # fmt: skip
        trials=TRIALS,
    )
    assert health["workspaces"] == COUNT
    assert sessions[0]["title"] == "title 4321" and sessions[0]["items"] is None
    assert [i["content"] for i in snap["items"]] == ["hello 4321", "answer 4321"]
    assert [i["seq"] for i in snap["items"]] == [1, 2]
    assert cpu - base_cpu <= EXTRA_CPU_BOUND_S, (
        f"/health after {wall:.2f}s and {cpu:.2f} CPU seconds "
        f"(empty data dir: {base_wall:.2f}s, {base_cpu:.2f} CPU seconds)"
    )
