"""Timing a hook's process from the outside, shared by bench/hook_cost.py (the command hook)
and bench/hook_http.py (the HTTP hook beside it): the recorded events, the installed
`sidemirror`, and wall and CPU time per run."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "tests" / "fixtures" / "hooks" / "permission-request.jsonl"
SIDEMIRROR = str(Path(sys.executable).with_name("sidemirror"))


def summary_ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p90_ms": round(ordered[int(len(ordered) * 0.9) - 1] * 1000, 1),
        "n": len(ordered),
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], stdin: bytes, n: int) -> dict[str, float]:
    """Wall time per run, and CPU time (user + system), which a loaded machine inflates less."""
    samples, cpu = [], []
    for _ in range(n):
        start, cpu_start = time.perf_counter(), _cpu()
        done = subprocess.run(cmd, input=stdin, capture_output=True, check=False)
        samples.append(time.perf_counter() - start)
        cpu.append(_cpu() - cpu_start)
        if done.returncode != 0 or (cmd[-1] != "--version" and done.stdout):
            raise RuntimeError(f"{cmd} failed: {done.returncode} {done.stdout!r}")
    return {**summary_ms(samples), "cpu_p50_ms": round(statistics.median(cpu) * 1000, 1)}
