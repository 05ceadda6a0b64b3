"""Agents seen as they start, before they write: a cheap scan of new processes on a timer.

A workspace is `active` with a `pid` while an agent process runs in its directory. The sources
look for one when a transcript grows, which is late for an agent that was just started: it writes
nothing until its first prompt. Linux has no event for "a process started" that an unprivileged
user can subscribe to (the proc connector and fanotify need CAP_NET_ADMIN / CAP_SYS_ADMIN), so
this lists /proc every SCAN_S seconds and reads only what it has not seen: a listing of a few
hundred names, and the cmdline of the processes started since the last scan. A process that has
not exec'd its program yet is looked at again on the next few scans (YOUNG_SCANS), then settled.
Elsewhere, `procs.agent_pids()` (psutil) is the scan, at the same pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable

from sidemirror.core.store import Store
from sidemirror.sources.procs import PROC, agent_pids, is_agent_cmdline, pid_alive

logger = logging.getLogger(__name__)

SCAN_S = 2.0
YOUNG_SCANS = 3  # a fork shows its parent's cmdline until it execs: look again this many times


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None  # exited meanwhile, or not ours to read
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


class AgentScanner:
    """`scan()` → {cwd: pid} of the agent processes alive now (the oldest per directory)."""

    def __init__(self, uid: int | None = None, listing: Callable[[], list[int]] | None = None):
        self.uid = os.getuid() if uid is None else uid
        self._listing = listing
        self._agents: dict[int, str] = {}  # pid -> cwd
        self._young: dict[int, int] = {}  # pid -> looks left before it is settled as not ours
        self._settled: set[int] = set()  # pids looked at: not an agent (or not the user's)

    def _pids(self) -> list[int]:
        if self._listing is not None:
            return self._listing()
        return [int(e.name) for e in os.scandir(PROC) if e.name.isdigit()]

    def scan(self) -> dict[str, int]:
        if not PROC.is_dir():
            return agent_pids()
        live = set(self._pids())
        for known in (self._agents, self._young):
            for pid in [p for p in known if p not in live]:
                del known[pid]
        self._settled &= live
        for pid in live:
            if pid in self._agents or pid in self._settled:
                continue
            self._look(pid)
        found: dict[str, int] = {}
        for pid, cwd in self._agents.items():
            found[cwd] = min(pid, found.get(cwd, pid))
        return found

    def _look(self, pid: int) -> None:
        try:
            if os.stat(PROC / str(pid)).st_uid != self.uid:
                self._settled.add(pid)  # another user's agent is not this user's session
                return
        except OSError:
            return
        argv = _cmdline(pid)
        if argv is not None and is_agent_cmdline(argv):
            try:
                cwd = os.readlink(PROC / str(pid) / "cwd")
            except OSError:
                return
            self._agents[pid] = cwd.rstrip("/") or "/"
            self._young.pop(pid, None)
            return
        left = self._young.get(pid, YOUNG_SCANS) - 1
        if left <= 0:
            self._young.pop(pid, None)
            self._settled.add(pid)
        else:
            self._young[pid] = left


def apply(store: Store, found: dict[str, int]) -> None:
    """Give each workspace the agent alive in its directory; drop the pid of one that exited."""
    store.agent_dirs = found
    for ws in list(store.workspaces.values()):
        if ws.pid is not None and pid_alive(ws.pid):
            continue
        ws.pid = found.get(ws.directory)


async def follow_agents(store: Store, stop: asyncio.Event, every: float = SCAN_S) -> None:
    """Keep workspaces' `pid` current: an agent appears within `every` seconds of starting."""
    scanner = AgentScanner()
    first = True
    while not stop.is_set():
        try:
            # The first scan reads every process (milliseconds): in a thread. Later ones read
            # only new processes (~0.1 ms): inline, since a thread hop would cost more.
            found = await asyncio.to_thread(scanner.scan) if first else scanner.scan()
            first = False
            apply(store, found)
        except Exception:  # a scan that fails (a /proc quirk) is retried, never fatal
            logger.warning("agent process scan failed", exc_info=True)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
