"""The aiohttp application: wiring of state, middleware, routes, sources and shutdown."""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

from aiohttp import web

from sidemirror import __version__
from sidemirror.activity.log import ACTIVITY, ActivityLog
from sidemirror.core.hub import Hub
from sidemirror.core.models import PROTOCOL_VERSION, SessionItem
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionLog, Store
from sidemirror.ingest import run as ingest
from sidemirror.ingest.journal import Journals
from sidemirror.mcp import endpoint as mcp
from sidemirror.settings import Settings
from sidemirror.sources.base import Source
from sidemirror.sources.procs import pid_alive
from sidemirror.sources.registry import build_sources
from sidemirror.web import activity as activity_api
from sidemirror.web import sessions as session_api
from sidemirror.web.security import GUARD, Guard, Tickets, pairing, public, security_middleware
from sidemirror.web.state import APP_STATE, AppState

log = logging.getLogger(__name__)
routes = web.RouteTableDef()
SOURCES = web.AppKey("sources", list[Source])
NDJSON_MAX = 16 << 20


@routes.get("/health")
@public
async def health(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    return web.json_response(
        {
            "app": "sidemirror",
            "version": __version__,
            "protocol": PROTOCOL_VERSION,
            "status": "ok",
            "instance": state.instance,
            "uptime_s": round(time.monotonic() - state.started, 3),
            "workspaces": len(state.store.workspaces),
            "parse_errors": state.store.parse_errors,
        }
    )


@routes.post("/api/pair")
@pairing
async def pair(request: web.Request) -> web.Response:
    # The middleware has checked the Origin is an allowed extension and the Host is loopback.
    return web.json_response({"token": request.app[APP_STATE].guard.token})


@routes.post("/api/ticket")
async def ticket(request: web.Request) -> web.Response:
    tickets = request.app[APP_STATE].guard.tickets
    return web.json_response({"ticket": tickets.issue(), "expires_in": int(tickets.ttl_s)})


class DebugTrace:
    """`--debug-events-jsonl`: every projected event, as sent, one per line."""

    def __init__(self, path: Path, store: Store) -> None:
        self.store = store
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh: IO[str] = path.open("a", encoding="utf-8")

    def __call__(self, log_: SessionLog, item: SessionItem) -> None:
        # Taps run right after the append: the item is the newest in the log.
        self.fh.write(self.store.wire_json(log_, len(log_.items) - 1) + "\n")
        self.fh.flush()


def fresh_spill_dir(root: Path) -> Path:
    """This process's spill directory (see item_log.py), after removing dead processes' ones.

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


def create_app(settings: Settings, token: str) -> web.Application:
    hub = Hub(settings.queue_size)
    spill_dir = fresh_spill_dir(settings.data_dir / "spill")
    store = Store(hub, Projector(settings.max_chars), spill_dir)
    guard = Guard(token, settings.allowed_origins, Tickets())
    app = web.Application(middlewares=[security_middleware], client_max_size=NDJSON_MAX)
    state = AppState(settings, store, hub, guard)
    app[APP_STATE] = state
    app[GUARD] = guard
    journals = Journals(settings.data_dir / "ingest")
    app[ingest.JOURNALS] = journals
    app.add_routes(routes)
    app.add_routes(session_api.routes)
    app.add_routes(ingest.routes)
    mcp.setup(app)
    app[ACTIVITY] = activity_log = ActivityLog(settings.data_dir / "activity")
    app.add_routes(activity_api.routes)
    app.on_cleanup.append(activity_log.on_cleanup)
    if settings.debug_events_jsonl is not None:
        store.taps.append(DebugTrace(settings.debug_events_jsonl, store))

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        restored = journals.restore(store)
        if restored:
            log.info("restored %d ingested session(s)", restored)
        sources = build_sources(settings, store)
        for source in sources:
            await source.start()
        yield
        for source in reversed(sources):
            await source.stop()
        journals.close()
        store.close()
        shutil.rmtree(spill_dir, ignore_errors=True)

    async def close_streams(app: web.Application) -> None:
        # Open SSE handlers would otherwise hold shutdown for aiohttp's 60 s grace period.
        for task in list(state.streams):
            task.cancel()

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(close_streams)
    return app
