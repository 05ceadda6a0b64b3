"""A real ClaudeSource over `<tmp>/projects`, with one session read whole, for the tests that
then watch what it does live or what it left in its data dir."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.sources.claude.source import ClaudeSource


@asynccontextmanager
async def session_loaded(
    tmp_path: Path, cwd: str, sid: str
) -> AsyncIterator[tuple[Store, SessionLog]]:
    """The source started on `tmp_path / "projects"` (data in `tmp_path / "data"`) and indexed,
    and session `sid` of workspace `cwd` loaded; the source stops when the block ends."""
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [tmp_path / "projects"], tmp_path / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 10)
        ws = store.workspace(workspace_id_for(cwd))
        assert ws is not None
        log = ws.sessions[sid]
        await store.load(log)
        yield store, log
    finally:
        await source.stop()
