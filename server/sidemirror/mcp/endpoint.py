"""`POST /mcp`: MCP over Streamable HTTP (protocol 2025-06-18), JSON responses only.

One JSON-RPC message per POST; every request is answered in the POST's own JSON body, so there
is no server-to-client SSE channel (`GET /mcp` → 405). Sessions are issued by `initialize` and
kept in a bounded LRU table: a forgotten or ended session gets 404, which tells a client to
initialize again. Host, Origin and token checks happen in the security middleware, as for every
other route.

HTTP status of JSON-RPC errors: a body that is not one valid message (parse error, batch,
malformed envelope) and transport rule failures get 4xx; an error about a well-formed request
(unknown method, bad params) is an ordinary JSON-RPC response, 200.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from sidemirror import __version__
from sidemirror.core.redact import redact_json, redact_text
from sidemirror.mcp.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SESSION_NOT_FOUND,
    Message,
    RequestId,
    RpcError,
    parse_message,
)
from sidemirror.web.bodies import error_response, read_json

logger = logging.getLogger(__name__)

# Newest first. 2025-03-26 is what a client that sends no MCP-Protocol-Version header speaks.
SUPPORTED_VERSIONS = ("2025-06-18", "2025-03-26")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
HEADER_DEFAULT_VERSION = "2025-03-26"
# Versions with tool `title`, `outputSchema` and `structuredContent` (new in 2025-06-18).
STRUCTURED_VERSIONS = ("2025-06-18",)
MAX_SESSIONS = 256

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
# A browser client (the extension's Connect view) may only read these if they are exposed.
EXPOSE = {"Access-Control-Expose-Headers": f"{SESSION_HEADER}, {VERSION_HEADER}"}

INSTRUCTIONS = (
    "Sidemirror mirrors coding-agent sessions and browser activity into the user's Chrome side "
    "panel. Read sessions with sidemirror_get_session; when you act in a browser, report each "
    "action with sidemirror_report_browser_action so the user can follow along."
)


@dataclass(eq=False)
class McpSession:
    id: str
    protocol_version: str
    client: str
    initialized: bool = False


class SessionTable:
    """Sessions by id, least recently used first; the oldest is forgotten past `capacity`."""

    def __init__(self, capacity: int = MAX_SESSIONS) -> None:
        self.capacity = capacity
        self._sessions: OrderedDict[str, McpSession] = OrderedDict()

    def open(self, protocol_version: str, client: str) -> McpSession:
        # token_urlsafe is visible ASCII only, as the spec requires of session ids.
        session = McpSession(secrets.token_urlsafe(24), protocol_version, client)
        self._sessions[session.id] = session
        while len(self._sessions) > self.capacity:
            self._sessions.popitem(last=False)
        return session

    def get(self, session_id: str) -> McpSession | None:
        session = self._sessions.get(session_id)
        if session is not None:
            self._sessions.move_to_end(session_id)
        return session

    def close(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    def __len__(self) -> int:
        return len(self._sessions)


MCP_SESSIONS = web.AppKey("mcp_sessions", SessionTable)


async def get_mcp(request: web.Request) -> web.Response:
    # We never push server-initiated messages, so there is no stream to open.
    return error_response(
        405,
        "method_not_allowed",
        "this MCP endpoint answers POST only (JSON responses, no SSE)",
        Allow="POST, DELETE",
    )


async def delete_mcp(request: web.Request) -> web.Response:
    try:
        _check_version_header(request)
        session = _session(request, None)
    except RpcError as exc:
        return exc.response(EXPOSE)
    request.app[MCP_SESSIONS].close(session.id)
    return web.Response(status=204, headers=EXPOSE)


async def post_mcp(request: web.Request) -> web.Response:
    try:
        return await _handle(request)
    except RpcError as exc:
        return exc.response(EXPOSE)


async def _handle(request: web.Request) -> web.Response:
    if not _accepts_json(request.headers.get("Accept")):
        raise RpcError(INVALID_REQUEST, "Accept must allow application/json", status=406)
    try:
        body = await read_json(request)  # 415 / 413 stay HTTP errors, like every JSON endpoint
    except web.HTTPBadRequest as exc:  # read_json's only 400 is "not JSON"
        raise RpcError(PARSE_ERROR, f"Parse error: {exc.text}", status=400) from None
    message = parse_message(body)
    if message.is_request and message.method == "initialize":
        return _initialize(request, message)
    _check_version_header(request, message.reply_id)
    session = _session(request, message.reply_id)
    if message.method is None or message.id is None:
        # Notifications and responses (we never send requests, so responses are stray) → 202.
        if message.method == "notifications/initialized":
            session.initialized = True
        return web.Response(status=202, headers=EXPOSE)
    params = {} if message.params is None else message.params
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object", id=message.id)
    result = await _dispatch(request.app, session, message.method, params, message.id)
    return web.json_response({"jsonrpc": "2.0", "id": message.id, "result": result}, headers=EXPOSE)


def _accepts_json(accept: str | None) -> bool:
    """Clients should send `application/json, text/event-stream`; absent Accept means any."""
    if not accept:
        return True
    types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(types & {"application/json", "application/*", "*/*"})


def _check_version_header(request: web.Request, msg_id: RequestId | None = None) -> None:
    version = request.headers.get(VERSION_HEADER, HEADER_DEFAULT_VERSION)
    if version not in SUPPORTED_VERSIONS:
        raise RpcError(
            INVALID_REQUEST,
            f"Bad Request: unsupported {VERSION_HEADER} {version!r}; this server speaks "
            f"{', '.join(SUPPORTED_VERSIONS)}",
            status=400,
            id=msg_id,
            data={"supported": list(SUPPORTED_VERSIONS), "requested": version},
        )


def _session(request: web.Request, msg_id: RequestId | None) -> McpSession:
    session_id = request.headers.get(SESSION_HEADER)
    if not session_id:
        raise RpcError(
            INVALID_REQUEST,
            f"Bad Request: {SESSION_HEADER} header is required (call initialize first)",
            status=400,
            id=msg_id,
        )
    session = request.app[MCP_SESSIONS].get(session_id)
    if session is None:
        raise RpcError(
            SESSION_NOT_FOUND,
            "Session not found (ended or expired); initialize again",
            status=404,
            id=msg_id,
        )
    return session


def _initialize(request: web.Request, message: Message) -> web.Response:
    msg_id, params = message.id, message.params
    # A new session every time, whatever Mcp-Session-Id came along: initialize starts over.
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        raise RpcError(
            INVALID_PARAMS,
            "Invalid params: initialize needs a string params.protocolVersion",
            id=msg_id,
        )
    asked = params["protocolVersion"]
    version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
    info = params.get("clientInfo")
    # Logged and kept: redacted like anything a client sends.
    client = redact_text(str(info.get("name", ""))) if isinstance(info, dict) else ""
    session = request.app[MCP_SESSIONS].open(version, client)
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "sidemirror", "title": "Sidemirror", "version": __version__},
        "instructions": INSTRUCTIONS,
    }
    logger.info("MCP session opened for %r at protocol %s", client or "unnamed client", version)
    return web.json_response(
        {"jsonrpc": "2.0", "id": msg_id, "result": result},
        headers={**EXPOSE, SESSION_HEADER: session.id},
    )


async def _dispatch(
    app: web.Application,
    session: McpSession,
    method: str,
    params: dict[str, Any],
    msg_id: RequestId,
) -> dict[str, Any]:
    if method == "ping":
        return {}
    if method == "tools/list":
        from sidemirror.mcp.tools import TOOLS  # at first use: ~20 ms less before /health

        # One page holds every tool, so a `cursor` is ignored and no nextCursor is sent.
        return {"tools": [_for_version(t.definition, session) for t in TOOLS.values()]}
    if method == "tools/call":
        return await _call_tool(app, session, params, msg_id)
    raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method!r}", id=msg_id)


def _for_version(definition: dict[str, Any], session: McpSession) -> dict[str, Any]:
    if session.protocol_version in STRUCTURED_VERSIONS:
        return definition
    # Older clients get the older shape.
    return {k: v for k, v in definition.items() if k not in ("title", "outputSchema")}


async def _call_tool(
    app: web.Application, session: McpSession, params: dict[str, Any], msg_id: RequestId
) -> dict[str, Any]:
    from sidemirror.mcp.tools import TOOLS, ToolError  # at first use: see tools/list

    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: tools/call needs a string name", id=msg_id)
    tool = TOOLS.get(name)
    if tool is None:
        raise RpcError(
            INVALID_PARAMS,
            f"Unknown tool: {redact_text(name)!r}",
            id=msg_id,
            data={"tools": sorted(TOOLS)},
        )
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(
            INVALID_PARAMS, f"Invalid params: {name} arguments must be an object", id=msg_id
        )
    try:
        # A tool's inputs are redacted like every field a client sends: a workspace directory
        # or session id then names the redacted one the store holds, and no answer, error or
        # log line can echo a secret back.
        arguments = redact_json(arguments)
    except ValueError as exc:  # nested too deeply
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}", id=msg_id) from None
    assert isinstance(arguments, dict)
    try:
        parsed = tool.input_model.model_validate(arguments)
    except ValidationError as exc:
        problems = [
            {"path": ".".join(str(p) for p in err["loc"]) or "(arguments)", "message": err["msg"]}
            for err in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid arguments for {name}: {summary}",
            id=msg_id,
            data={"errors": problems},
        ) from None
    try:
        structured = await tool.run(app, parsed)
    except ToolError as exc:
        return _error_result(str(exc))
    except Exception as exc:  # a tool bug must reach the model as a failed call, not a 500
        logger.exception("MCP tool %s failed", name)
        return _error_result(f"{name} failed: {type(exc).__name__}: {exc}")
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if session.protocol_version in STRUCTURED_VERSIONS:
        result["structuredContent"] = structured
    return result


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
