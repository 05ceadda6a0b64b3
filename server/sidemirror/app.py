"""The composition root: the one route list, and the one place where sources, the store and the
outputs (HTTP, SSE, MCP, the debug trace) are wired together.

    sources (files, ingest) ─► store ─► hub ─► SSE streams, snapshots, MCP tools

Every other module gets what it needs from here: handlers read `AppState` through `APP_STATE`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from aiohttp import web

from sidemirror import __version__
from sidemirror.activity.links import BrowserLinks
from sidemirror.activity.log import ActivityLog
from sidemirror.attention.agent_figures import AgentFigures
from sidemirror.attention.service import Attention
from sidemirror.core.debug_trace import DebugTrace
from sidemirror.core.free_memory import release_free_memory
from sidemirror.core.hub import Hub
from sidemirror.core.private import private_dir
from sidemirror.core.projection import Projector
from sidemirror.core.state_sweep import sweep_states
from sidemirror.core.store import Store
from sidemirror.hook_secret import load_hook_secret
from sidemirror.ingest.journal import IngestJournal
from sidemirror.mcp import endpoint as mcp
from sidemirror.panel_credential import load_panel_credential
from sidemirror.settings import Settings
from sidemirror.sources.base import Source
from sidemirror.sources.files.indexing import Indexing
from sidemirror.sources.procs import pid_alive
from sidemirror.sources.registry import build_sources
from sidemirror.sources.remote.hosts import RemoteHosts
from sidemirror.web import (
    activity,
    answers,
    attention,
    browser_links,
    changes,
    decision_batch,
    decisions,
    forward,
    health,
    hook_http,
    hooks,
    identify,
    ingest,
    notes,
    pair,
    search,
    session_export,
    session_summary,
    sessions,
    statusline,
)
from sidemirror.web.about import load_server_id
from sidemirror.web.bodies import NDJSON_LIMIT
from sidemirror.web.forward_listener import forward_listener_ctx
from sidemirror.web.peer import OwnerCache
from sidemirror.web.rules import extension_origins
from sidemirror.web.security import Guard, Tickets, security_headers, security_middleware
from sidemirror.web.session_stream import session_stream
from sidemirror.web.state import APP_STATE, AppState
from sidemirror.web.storage import storage_middleware

logger = logging.getLogger(__name__)


def routes() -> list[web.RouteDef]:
    """Every route the server answers (docs/api.md documents each; a test keeps them in step).
    How each one authenticates is declared on its handler (`web/security.py`)."""
    return [
        web.get("/health", health.health),
        web.get("/api/identify", identify.identify),
        web.post("/api/pair", pair.pair),
        web.post("/api/pair/code", pair.pair_code),
        web.post("/api/ticket", health.ticket),
        # Sessions: JSON reads and the live stream.
        web.get("/api/workspaces", sessions.list_workspaces),
        web.get("/workspace/{ws}/sessions", sessions.list_sessions),
        web.get("/api/sessions", sessions.list_all_sessions),
        web.get("/workspace/{ws}/session", sessions.snapshot),
        web.get("/workspace/{ws}/session/stream", session_stream),
        web.get("/workspace/{ws}/session/changes", changes.session_changes),
        web.get("/workspace/{ws}/session/summary", session_summary.session_card),
        web.get("/workspace/{ws}/session/export", session_export.export_session),
        web.get("/workspace/{ws}/search", search.search_session),
        web.get("/api/search", search.search_all),
        web.get("/workspace/{ws}/session/items/{item_id}", sessions.full_item),
        web.get("/workspace/{ws}/session/items/{item_id}/activity", browser_links.call_activity),
        # Pushed sessions.
        web.post("/api/ingest", ingest.ingest_ndjson),
        web.get("/api/ingest/ws", ingest.ingest_ws),
        # Browse activity.
        web.post("/api/activity", activity.post_activity),
        web.get("/api/activity/ws", activity.activity_ws),
        web.get("/activity/stream", activity.activity_stream),
        web.get("/api/refs", activity.refs),
        web.get("/api/activity/latest-workspace", activity.latest_workspace),
        # Attention: live states, Claude Code hooks, decisions on permission requests.
        web.get("/api/attention", attention.list_attention),
        web.get("/api/attention/stream", attention.attention_stream),
        web.post("/api/hooks/claude", hooks.claude_hook),
        web.post("/api/hooks/claude/http", hook_http.claude_http_hook),
        web.post("/api/hooks/codex", hooks.codex_hook),
        web.post("/api/statusline/claude", statusline.report_statusline),
        web.get("/api/statusline/claude", statusline.statusline_figures),
        web.get("/api/decisions", decisions.list_decisions),
        web.post("/api/decisions/batch", decision_batch.decide_batch),  # before {request_id}
        web.post("/api/decisions/{request_id}", decisions.decide),
        web.post("/api/decisions/{request_id}/reveal", decisions.reveal),
        web.post("/api/decisions/{request_id}/answer", answers.answer_question),
        web.get("/api/notes", notes.list_notes),
        web.post("/api/notes", notes.add_note),
        web.post("/api/notes/{note_id}/cancel", notes.cancel_note),
        # MCP (Streamable HTTP).
        web.get("/mcp", mcp.get_mcp),
        web.post("/mcp", mcp.post_mcp),
        web.delete("/mcp", mcp.delete_mcp),
    ]


def fresh_spill_dir(root: Path) -> Path:
    """This process's spill directory (see core/item_log.py), after removing dead processes' ones.

    Spill files are a cache of one process's logs, never trusted across a restart; one folder per
    pid keeps two servers on the same data dir from overwriting each other's files.
    """
    if root.is_dir():
        for child in root.iterdir():
            if not (child.name.isdigit() and pid_alive(int(child.name))):
                shutil.rmtree(child, ignore_errors=True)
    own = root / str(os.getpid())
    shutil.rmtree(own, ignore_errors=True)
    return own


async def _set_when_listed(indexing: Indexing, sources: Sequence[Source]) -> None:
    await asyncio.gather(*(source.ready.wait() for source in sources))
    indexing.listed.set()
    # The reader threads' arenas hold what the listing read and let go: give it back.
    await asyncio.to_thread(release_free_memory)


def once_listening(app: web.Application) -> None:
    """The start-up work left until the server answers: the activity log's rings (thousands of
    workspaces' files) are read beside it, not before it."""
    app[APP_STATE].activity.start_loading()


def create_app(settings: Settings, token: str) -> web.Application:
    # Everything under the data dir is session text: only this OS user may read it.
    private_dir(settings.data_dir)
    hub = Hub(settings.queue_size)
    spill_dir = fresh_spill_dir(settings.data_dir / "spill")
    store = Store(hub, Projector(settings.max_chars), spill_dir)
    store.idle_after_s = settings.idle_time_s
    owners = OwnerCache(enabled=not settings.pairing_code)
    guard = Guard(
        token,
        load_panel_credential(settings.data_dir),
        extension_origins(settings.extension_ids),
        Tickets(),
        owners=owners,
        hook_secret=load_hook_secret(settings.data_dir),
    )
    state = AppState(
        settings,
        store,
        hub,
        guard,
        activity=ActivityLog(settings.data_dir / "activity"),
        journal=IngestJournal(settings.data_dir / "ingest"),
    )
    # Storage inside security: a 507 for a full disk gets the same checks and headers.
    middlewares = [security_middleware(guard), storage_middleware(settings.data_dir)]
    app = web.Application(middlewares=middlewares, client_max_size=NDJSON_LIMIT)
    app[APP_STATE] = state
    app[mcp.MCP_SESSIONS] = mcp.SessionTable()
    indexing = app[health.INDEXING] = Indexing()
    app[identify.SERVER_ID] = load_server_id(settings.data_dir)
    app[pair.PAIRING_CODES] = pair.PairingCodes()
    remote = app[forward.REMOTE_HOSTS] = RemoteHosts(store, settings.data_dir, settings.max_hosts)
    app[hooks.ATTENTION] = Attention(store, settings.decision_timeout_s)
    app[statusline.AGENT_FIGURES] = AgentFigures()
    app[browser_links.BROWSER_LINKS] = BrowserLinks(store, state.activity)
    app.on_response_prepare.append(security_headers)
    app.add_routes(routes())
    trace = None
    if settings.debug_events_jsonl is not None:
        trace = DebugTrace(settings.debug_events_jsonl, store, __version__)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        if trace is not None:
            trace.start(replay=settings.debug_replay)
        restored = state.journal.restore(store)
        if trace is not None:
            if settings.debug_replay:  # journaled sessions are read when first used: read now
                for log in [s for ws in store.workspaces.values() for s in ws.sessions.values()]:
                    await store.load(log)
            trace.attach()  # after the restore: what the journal rebuilt was traced before
        if restored:
            logger.info("restored %d ingested session(s)", restored)
        sources = build_sources(settings, store)
        indexing.parts = [source.progress for source in sources]
        # Each returns at once and indexes its archive in the background: the server listens
        # (and answers /health) whatever the number of sessions on disk.
        for source in sources:
            await source.start()
        listed = asyncio.create_task(_set_when_listed(indexing, sources), name="listed")
        quiet = asyncio.create_task(sweep_states(store), name="state-sweep")
        await remote.start()
        yield
        listed.cancel()
        quiet.cancel()
        await remote.stop()
        for source in reversed(sources):
            await source.stop()
        state.journal.close()
        state.activity.close()
        store.close()
        if trace is not None:
            trace.close()
        shutil.rmtree(spill_dir, ignore_errors=True)

    async def close_streams(app: web.Application) -> None:
        # Open SSE handlers would otherwise hold shutdown for aiohttp's 60 s grace period.
        for task in list(state.streams):
            task.cancel()

    app.cleanup_ctx.append(search.search_lifecycle)  # first: its tap sees every item
    app.cleanup_ctx.append(lifecycle)
    # After `lifecycle`: the remote hosts are started before a forwarder can say hello. Agent
    # files of other machines arrive on their own socket, never on this app's port.
    app.cleanup_ctx.append(forward_listener_ctx(remote, settings.data_dir, settings.runtime_dir))
    app.on_shutdown.append(close_streams)
    return app
