"""`--debug-events-jsonl`: every projected event, as sent, one per line, for debugging a source."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from sidemirror.core.models import SessionItem
from sidemirror.core.store import SessionLog, Store


class DebugTrace:
    """A store tap: called right after each append, so the item is the newest in its log."""

    def __init__(self, path: Path, store: Store) -> None:
        self.store = store
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh: IO[str] = path.open("a", encoding="utf-8")

    def __call__(self, log: SessionLog, item: SessionItem) -> None:
        self.fh.write(self.store.wire_json(log, len(log.items) - 1) + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()
