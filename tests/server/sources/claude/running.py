"""A real ClaudeSource over `<root>/projects` (its data in `<root>/data`), with one session read
whole, for the tests that then watch what it does live or what it left in its data dir."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.sources.claude.source import ClaudeSource


async def started(root: Path, cwd: str, sid: str) -> tuple[Store, ClaudeSource, SessionLog]:
    """The source started and indexed, and session `sid` of workspace `cwd` loaded. The caller
    stops the source."""
    store = Store(Hub(), Projector())
    source = ClaudeSource(store, [root / "projects"], root / "data")
    await source.start()
    try:
        await asyncio.wait_for(source.ready.wait(), 10)
        ws = store.workspace(workspace_id_for(cwd))
        assert ws is not None
        log = ws.sessions[sid]
        await store.load(log)
    except BaseException:
        await source.stop()
        raise
    return store, source, log


@asynccontextmanager
async def session_loaded(root: Path, cwd: str, sid: str) -> AsyncIterator[tuple[Store, SessionLog]]:
    """`started`, with the source stopped when the block ends."""
    store, source, log = await started(root, cwd, sid)
    try:
        yield store, log
    finally:
        await source.stop()
