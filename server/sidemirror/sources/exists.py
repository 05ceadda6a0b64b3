"""`python -m sidemirror.sources.exists [SERVE ARGS…]`: exit 0 if this machine has agent
sessions to mirror.

`scripts/serve` uses it to add the demo session only when there is nothing real to show, so the
first start after a real session appeared has no demo. It is given the flags `serve` gets: the
`--claude-dir` and `--codex-dir` there are where the sessions are looked for (else the defaults).
"""

from __future__ import annotations

import argparse
import sys
from itertools import islice
from pathlib import Path

from sidemirror.settings import default_claude_dirs, default_codex_dir


def sessions_exist(claude_dirs: list[Path], codex_dir: Path) -> bool:
    for d in claude_dirs:
        if d.is_dir() and next(islice(d.glob("*/*.jsonl"), 1), None) is not None:
            return True
    sessions = codex_dir / "sessions"
    return (
        sessions.is_dir() and next(islice(sessions.rglob("rollout-*.jsonl"), 1), None) is not None
    )


def _dirs(argv: list[str]) -> tuple[list[Path], Path]:
    """The directories `serve` would read with these flags (the others are ignored)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--claude-dir", type=Path, action="append", default=[])
    parser.add_argument("--codex-dir", type=Path)
    args, _ = parser.parse_known_args(argv)
    return args.claude_dir or default_claude_dirs(), args.codex_dir or default_codex_dir()


if __name__ == "__main__":
    sys.exit(0 if sessions_exist(*_dirs(sys.argv[1:])) else 1)
