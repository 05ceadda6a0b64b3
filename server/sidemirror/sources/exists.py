"""`python -m sidemirror.sources.exists`: exit 0 if this machine has agent sessions to mirror.

`scripts/serve` uses it to add the demo session only when there is nothing real to show.
"""

from __future__ import annotations

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


if __name__ == "__main__":
    sys.exit(0 if sessions_exist(default_claude_dirs(), default_codex_dir()) else 1)
