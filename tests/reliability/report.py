"""Figures for docs/reliability.md: each test appends one JSON line to $RELIABILITY_REPORT."""

from __future__ import annotations

import json
import os
import time
from typing import Any


def record(fault: str, figures: dict[str, Any], *, trials: int) -> None:
    path = os.environ.get("RELIABILITY_REPORT")
    if not path:
        return
    line = {**figures, "fault": fault, "trials": trials, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, default=str) + "\n")


def render(path: str) -> str:
    """The markdown table of docs/reliability.md from a report file."""
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    rows = [r for r in rows if r.get("kind") != "sample"]  # a long run's samples: not a row each

    def mib(n: Any) -> str:
        return f"{n / 2**20:.1f}" if isinstance(n, (int, float)) else "—"

    out = [
        "| Fault injected | Trials | Items lost | Duplicates | Crashes | RSS before → after (MiB) | Notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        before = r.get("rss_before")
        after = r.get("rss_after", r.get("rss_max"))
        if before is None and "rss_growth" in r:
            mem = f"+{mib(r['rss_growth'])}"
        else:
            mem = f"{mib(before)} → {mib(after)}"
        notes = {
            k: v
            for k, v in r.items()
            if k
            not in {
                "fault",
                "trials",
                "at",
                "lost",
                "duplicates",
                "crashes",
                "rss_before",
                "rss_after",
                "rss_growth",
                "case",
                "seed",
            }
        }
        out.append(
            f"| {r['fault']} | {r['trials']} | {r.get('lost', 0)} | {r.get('duplicates', 0)} | "
            f"{r.get('crashes', 0)} | {mem} | {json.dumps(notes)[1:-1].replace('|', '/')} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(render(sys.argv[1]))
