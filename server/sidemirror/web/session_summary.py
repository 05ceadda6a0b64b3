"""`GET /workspace/{id}/session/summary?session=ID`: one session's card — its ids, where its
transcript is, its totals (tokens by kind, cost of the main thread and of sub-agents, turns,
duration, models), the files it changed and its first prompt.

Summed from the items the server holds, in one pass (core/session_card.py, web/changes.py),
so the card says what the timeline says. A huge transcript read from near its end
(`skipped_bytes` > 0) is summed over the part held, as the Changes route is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from aiohttp import web

from sidemirror.core.models import SessionItem
from sidemirror.core.redact import redact_text
from sidemirror.core.session_card import CardFigures
from sidemirror.core.views import session_summary
from sidemirror.web.changes import files_changed
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.state import APP_STATE


def _counted(items: Iterable[SessionItem], figures: CardFigures) -> Iterator[SessionItem]:
    for item in items:
        figures.add(item)
        yield item


async def session_card(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    ws = workspace_of(request)
    log = session_of(ws, request.query.get("session"))
    await state.store.load(log)
    figures = CardFigures()
    files = files_changed(_counted(log.items, figures))
    source = log.source_file
    return web.json_response(
        {
            **session_summary(log),
            "workspace": ws.id,
            "workspace_name": ws.name,
            "directory": ws.directory,
            "epoch": log.epoch,
            # Where the agent wrote it on this machine (redacted, as directories are); null for
            # a pushed or forwarded session.
            "transcript_path": None if source is None else redact_text(source),
            "skipped_bytes": log.skipped_bytes,
            **figures.view(log.started_at),
            "files_changed": [
                {k: f[k] for k in ("path", "added", "removed", "item_ids")} for f in files
            ],
        }
    )
