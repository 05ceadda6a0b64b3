"""Pushed sessions: `POST /api/ingest` (NDJSON) and `GET /api/ingest/ws` (one JSON per frame).

Each record goes through a format converter (an adapter: it knows the source format and emits
redacted canonical items), is appended to the session's journal under the data dir, and only
then published — so ingested sessions survive a restart with the same ids (DESIGN §1).
"""

from __future__ import annotations

from typing import Any

from aiohttp import WSMsgType, web

from sidemirror.core.jsonline import decode_line
from sidemirror.core.store import workspace_id_for
from sidemirror.ingest.journal import Journals
from sidemirror.sources.base import Converter, Emitted
from sidemirror.sources.registry import CONVERTERS
from sidemirror.web.security import NDJSON_LIMIT, require_ndjson
from sidemirror.web.state import APP_STATE, AppState

routes = web.RouteTableDef()
WS_FRAME_LIMIT = 1 << 20
JOURNALS = web.AppKey("journals", Journals)


class IngestRun:
    """One request's worth of records: converter state plus accept/reject counts."""

    def __init__(self, app: web.Application, workspace: str, fmt: str, session: str | None):
        self.state: AppState = app[APP_STATE]
        self.journals = app[JOURNALS]
        self.workspace = workspace
        factory = CONVERTERS.get(fmt)
        if factory is None:
            raise web.HTTPBadRequest(
                text=f"unknown format {fmt!r}; expected one of {', '.join(sorted(CONVERTERS))}"
            )
        self.converter: Converter = factory(session or "default")
        self.accepted = 0
        self.rejected = 0
        self.errors: list[str] = []

    def feed_line(self, raw: bytes | str) -> None:
        line = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        if not line.strip():
            return
        ok, record = decode_line(line)
        if not ok:
            self._reject("not a JSON line (or nested too deeply)")
            return
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected a JSON object, got {type(record).__name__}")
            emitted = self.converter.convert(record)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            self._reject(str(exc) or type(exc).__name__)
            return
        self.accepted += 1
        self._apply(emitted)

    def finish(self) -> None:
        self._apply(self.converter.finish())

    def _reject(self, reason: str) -> None:
        self.rejected += 1
        self.state.store.count_parse_error()
        if len(self.errors) < 5:
            self.errors.append(reason[:200])

    def _apply(self, emitted: list[Emitted]) -> None:
        for e in emitted:
            self.journals.write(self.state.store, self.workspace, self.converter.agent, e)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": self.accepted, "rejected": self.rejected}
        if self.errors:
            out["errors"] = self.errors
        status = getattr(self.converter, "run_status", None)
        if status is not None:
            out["status"] = status
        return out


def _run_from_query(request: web.Request) -> IngestRun:
    workspace = request.query.get("workspace", "").rstrip("/")
    if not workspace:
        raise web.HTTPBadRequest(text="query parameter 'workspace' (a directory) is required")
    if len(workspace) == 12 and workspace_id_for(workspace) != workspace:
        known = request.app[APP_STATE].store.workspace(workspace)
        if known is not None:
            workspace = known.directory
    fmt = request.query.get("format", "events")
    return IngestRun(request.app, workspace, fmt, request.query.get("session"))


@routes.post("/api/ingest")
async def ingest_ndjson(request: web.Request) -> web.Response:
    require_ndjson(request)
    run = _run_from_query(request)
    received = 0
    pending: list[bytes] = []  # pieces of a line not yet ended (joined once: no quadratic copy)
    # Lines are applied as they arrive, so a live pipe shows up in the panel immediately. Split by
    # hand: StreamReader.readline() refuses lines over 128 KiB, and tool outputs are often longer.
    async for chunk in request.content.iter_any():
        received += len(chunk)
        if received > NDJSON_LIMIT:
            raise web.HTTPRequestEntityTooLarge(max_size=NDJSON_LIMIT, actual_size=received)
        if b"\n" not in chunk:
            pending.append(chunk)
            continue
        first, *lines, rest = chunk.split(b"\n")
        run.feed_line(b"".join([*pending, first]))
        for line in lines:
            run.feed_line(line)
        pending = [rest]
    run.feed_line(b"".join(pending))  # a last line without its newline still counts
    run.finish()
    return web.json_response(run.result())


@routes.get("/api/ingest/ws")
async def ingest_ws(request: web.Request) -> web.WebSocketResponse:
    run = _run_from_query(request)  # validated before the upgrade answers 101
    ws = web.WebSocketResponse(max_msg_size=WS_FRAME_LIMIT, heartbeat=30)
    await ws.prepare(request)
    async for msg in ws:
        if msg.type == WSMsgType.TEXT:
            for line in msg.data.splitlines():
                run.feed_line(line)
            # Running totals double as an acknowledgement the sender can wait for.
            await ws.send_json(run.result())
        elif msg.type == WSMsgType.BINARY:
            await ws.close(message=b"text frames only")
    run.finish()
    return ws
