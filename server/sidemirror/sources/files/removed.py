"""A followed file that is gone (deleted, or moved out of the watched folders) ends its session
with the reason "file removed"; a file that comes back is read again and its session lives on.

The session keeps its items (a panel showing it keeps them too) but is no longer active, and a
workspace whose every session lost its file leaves the listing (`Store.workspaces_by_activity`).
"""

from __future__ import annotations

from pathlib import Path

from sidemirror.core.store import FILE_REMOVED, SessionLog, Store
from sidemirror.sources.files.session import FileSession


def removed(store: Store, session: FileSession | None, path: Path) -> None:
    """`path` was reported deleted: end its session, unless the file is back already (deleted
    and recreated, or replaced by a rename, within one batch)."""
    if session is None or path.exists():
        return
    store.set_state(session.log, "ended", FILE_REMOVED)


def returned(store: Store, log: SessionLog) -> None:
    """The file of a session is there again (a change on it was seen): it is no longer ended;
    reading it (the file is new to the tailer: it starts over) sets its state from what it says."""
    if log.source_reason == FILE_REMOVED:
        store.set_state(log, "idle")
