"""`--debug-events-jsonl`: every projected event, as sent, one per line, for debugging a source."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from sidemirror.core.models import SessionItem
from sidemirror.core.private import open_private, private_dir
from sidemirror.core.store import SessionLog, Store


class DebugTrace:
    """A store tap: called right after each append, so the item is the newest in its log."""

    def __init__(self, path: Path, store: Store) -> None:
        self.store = store
        # Every projected item: session text, so only this user may read it. A folder we make
        # for it is private too; one the user chose is left as it is.
        if not path.parent.is_dir():
            private_dir(path.parent)
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        self.fh: IO[str] = os.fdopen(fd, "a", encoding="utf-8")

    def __call__(self, log: SessionLog, item: SessionItem) -> None:
        self.fh.write(self.store.wire_json(log, len(log.items) - 1) + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()
