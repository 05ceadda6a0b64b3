"""How long the quick commands take, process start to exit: `sidemirror --version`, and `status`
and `token` with no server running (what a shell prompt, a `$(sidemirror token)` or a hook pays
before doing anything). Median and max of N runs, in milliseconds.

    python bench/cli_startup.py [--server-dir DIR] [--runs N]

`--server-dir` measures another checkout's `server/` (e.g. main's, for a before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"--version": ["--version"], "status": ["status"], "token": ["token"]}


def cli_startup(server_dir: Path = ROOT / "server", runs: int = 15) -> dict[str, Any]:
    """Per command: median and max wall time (ms) of `python -m sidemirror …`, from a fresh
    process each run, against an empty runtime folder (no server)."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sm-cli-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(server_dir), "XDG_RUNTIME_DIR": tmp}
        for name, args in COMMANDS.items():
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "sidemirror", *args], env=env, capture_output=True
                )
                times.append((time.perf_counter() - started) * 1000)
            out[name] = {"median_ms": round(statistics.median(times)), "max_ms": round(max(times))}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server-dir", type=Path, default=ROOT / "server")
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args()
    print(json.dumps(cli_startup(args.server_dir, args.runs)))


if __name__ == "__main__":
    main()
