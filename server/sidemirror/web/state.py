"""The application's shared state, reached from handlers through one `web.AppKey`."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field

from aiohttp import web

from sidemirror.activity.log import ActivityLog
from sidemirror.core.hub import Hub
from sidemirror.core.store import Store
from sidemirror.ingest.journal import IngestJournal
from sidemirror.settings import Settings
from sidemirror.web.security import Guard


@dataclass(eq=False)
class AppState:
    settings: Settings
    store: Store
    hub: Hub
    guard: Guard
    activity: ActivityLog
    journal: IngestJournal
    # Open SSE responses, closed on shutdown so the server never waits on idle streams.
    streams: set[asyncio.Task[object]] = field(default_factory=set)
    instance: str = field(default_factory=lambda: secrets.token_hex(8))
    started: float = field(default_factory=time.monotonic)


APP_STATE = web.AppKey("app_state", AppState)
