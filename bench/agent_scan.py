"""What seeing agents start costs (sources/proc_watch.py), and how soon it sees one.

- per scan: CPU time of one steady-state scan (every process already looked at) beside a full
  scan of every process's cmdline (`procs.agent_pids`, what the sources did on each growth);
- idle: that scan's CPU at its pace (one per SCAN_S), and a real server's CPU while idle;
- seen after: from starting a `claude` process (a link to `sleep`) until a scan every SCAN_S
  finds it.
Run: `PYTHONPATH=server python bench/agent_scan.py`, or `scripts/bench --only agentscan`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sidemirror.sources.proc_watch import SCAN_S, AgentScanner
from sidemirror.sources.procs import agent_pids


def _cpu_us(fn: object, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        fn()  # type: ignore[operator]
        samples.append(time.process_time() - start)
    return round(statistics.median(samples) * 1e6, 1)


def _seen_after(tmp: Path, runs: int = 5) -> list[float]:
    claude = tmp / "claude"
    claude.symlink_to(shutil.which("sleep") or "/bin/sleep")
    scanner = AgentScanner()
    scanner.scan()
    out = []
    for _ in range(runs):
        time.sleep(SCAN_S / 3)  # start at a random-ish point between two scans
        proc = subprocess.Popen([str(claude), "30"], cwd=tmp)
        started = time.monotonic()
        try:
            next_scan = started + SCAN_S - (started % SCAN_S)
            while True:
                time.sleep(max(0.0, next_scan - time.monotonic()))
                if proc.pid in scanner.scan().values():
                    out.append(round(time.monotonic() - started, 2))
                    break
                next_scan += SCAN_S
        finally:
            proc.kill()
            proc.wait()
    return out


def _server_idle_cpu(tmp: Path, seconds: float) -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "sidemirror", "serve", "--port", str(port)]
    argv += ["--runtime-dir", str(tmp / "rt"), "--data-dir", str(tmp / "data")]
    argv += ["--claude-dir", str(tmp / "claude-projects"), "--codex-dir", str(tmp / "codex")]
    argv += ["--log-level", "warning"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3.0)  # started and settled
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        before, t0 = cpu(), time.monotonic()
        time.sleep(seconds)
        return round((cpu() - before) / (time.monotonic() - t0) * 100, 3)
    finally:
        proc.terminate()
        proc.wait()


def measure(idle_s: float = 10.0) -> dict[str, object]:
    scanner = AgentScanner()
    for _ in range(4):
        scanner.scan()  # every process settled
    steady = _cpu_us(scanner.scan, 200)
    full = _cpu_us(agent_pids, 50)
    with tempfile.TemporaryDirectory(prefix="sm-agentscan-") as tmp:
        seen = _seen_after(Path(tmp))
        server = _server_idle_cpu(Path(tmp), idle_s)
    return {
        "processes": sum(1 for e in os.scandir("/proc") if e.name.isdigit()),
        "scan_every_s": SCAN_S,
        "steady_scan_cpu_us": steady,
        "full_cmdline_scan_cpu_us": full,
        "scan_cpu_percent_at_pace": round(steady / 1e6 / SCAN_S * 100, 4),
        "seen_after_s": seen,
        "server_idle_cpu_percent": server,
        "server_idle_seconds": idle_s,
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
