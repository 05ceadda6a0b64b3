"""Listing a Codex home of 10,000 rollouts: the `Path.rglob` listing it had (one walk per
pattern, a `Path` per entry, no depth bound) against `files/listing.walk` (one bounded scandir
walk, names tested before any `Path` is made). Both then stat each rollout once
(`newest_first`), as the index needs size and mtime.

    PYTHONPATH=server python bench/codex_listing.py [--rollouts 10000] [--tree DIR]
    PYTHONPATH=server strace -f -c python bench/codex_listing.py --tree DIR --only walk

`--tree` keeps the tree in DIR (made when missing), so a run under `strace -c` with `--only`
(list once with one of them, stat nothing) counts the listing's syscalls, not the tree's making.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.files.indexing import newest_first
from sidemirror.sources.files.listing import walk

PATTERNS = ("rollout-*.jsonl", "rollout-*.jsonl.zst")  # what the rglob listing matched
DEPTH = CodexSource.watch_depth
ARCHIVED_SHARE = 10  # one rollout in ten archived (flat, compressed)


def make_tree(home: Path, rollouts: int) -> list[Path]:
    """`sessions/YYYY/MM/DD/rollout-*.jsonl`, about 27 a day, and archived ones."""
    line = b'{"type":"session_meta","payload":{"id":"x","cwd":"/w"}}\n'
    (home / "archived_sessions").mkdir(parents=True)
    for n in range(rollouts):
        if n % ARCHIVED_SHARE == 0:
            path = home / "archived_sessions" / f"rollout-{n:06d}.jsonl.zst"
        else:
            day = n // 27
            folder = home / "sessions" / "2025" / f"{day // 28 + 1:02d}" / f"{day % 28 + 1:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"rollout-{n:06d}.jsonl"
        path.write_bytes(line)
    return [home / "sessions", home / "archived_sessions"]


def by_rglob(roots: list[Path]) -> list[Path]:
    return [p for r in roots if r.is_dir() for pattern in PATTERNS for p in r.rglob(pattern)]


def by_walk(roots: list[Path]) -> list[Path]:
    def rollout(name: str) -> bool:
        return name.startswith("rollout-") and name.endswith((".jsonl", ".jsonl.zst"))

    return [p for r in roots for p in walk(r, DEPTH, rollout)]


LISTINGS: dict[str, Callable[[list[Path]], list[Path]]] = {"rglob": by_rglob, "walk": by_walk}


def timed(listing: Callable[[list[Path]], list[Path]], roots: list[Path]) -> tuple[float, float]:
    """Median ms of the listing alone, and of the listing with its stats (5 runs, warm)."""
    alone, stated = [], []
    for _ in range(5):
        started = time.perf_counter()
        found = listing(roots)
        alone.append(time.perf_counter() - started)
        newest_first(found)
        stated.append(time.perf_counter() - started)
    return statistics.median(alone) * 1000, statistics.median(stated) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--only", choices=sorted(LISTINGS))
    parser.add_argument("--tree", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.tree or Path(tmp)
        if args.tree and (home / "archived_sessions").is_dir():
            roots = [home / "sessions", home / "archived_sessions"]
        else:
            roots = make_tree(home, args.rollouts)
        if args.only:
            print(len(LISTINGS[args.only](roots)), "rollouts")
            return
        assert sorted(by_rglob(roots)) == sorted(by_walk(roots))  # the same files
        for name, listing in LISTINGS.items():
            alone, stated = timed(listing, roots)
            print(f"{name:6} listing {alone:7.1f} ms   with newest_first's stats {stated:7.1f} ms")


if __name__ == "__main__":
    main()
