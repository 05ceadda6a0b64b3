"""JSON-RPC 2.0 as MCP uses it: one message per body, its error codes, and error responses.

A body that is not one valid message is refused before any MCP rule runs. Since MCP 2025-06-18
removed batching, an array body is an Invalid Request, not a batch to unpack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from sidemirror.core.redact import redact_text

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SESSION_NOT_FOUND = -32001  # in JSON-RPC's implementation-defined server error range

RequestId = str | int


class RpcError(Exception):
    """An error answered as a JSON-RPC error response, with the HTTP status that carries it."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        status: int = 200,
        id: RequestId | None = None,
        data: Any = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.id, self.data = code, message, status, id, data

    def response(self, headers: dict[str, str]) -> web.Response:
        # Messages may quote what the client sent (a method or tool name): redacted like all output.
        error: dict[str, Any] = {"code": self.code, "message": redact_text(self.message)}
        if self.data is not None:
            error["data"] = self.data
        body = {"jsonrpc": "2.0", "id": self.id, "error": error}
        return web.json_response(body, status=self.status, headers=headers)


@dataclass(frozen=True)
class Message:
    """A request (method and id), a notification (method, no id) or a response (id only)."""

    id: RequestId | None
    method: str | None
    params: Any

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.id is not None

    @property
    def reply_id(self) -> RequestId | None:
        """The id an error about this message answers: only requests get one."""
        return self.id if self.is_request else None


def _valid_id(value: Any) -> bool:
    # MCP forbids null ids; bool is an int subclass in Python but not a JSON-RPC id.
    return isinstance(value, str | int) and not isinstance(value, bool)


def parse_message(body: Any) -> Message:
    """The one message in a decoded body, or an Invalid Request (HTTP 400)."""
    if isinstance(body, list):
        raise RpcError(
            INVALID_REQUEST,
            "Invalid Request: batches are not supported (removed in MCP 2025-06-18); "
            "send one JSON-RPC message per POST",
            status=400,
        )
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        raise RpcError(
            INVALID_REQUEST,
            'Invalid Request: expected a {"jsonrpc": "2.0", ...} object',
            status=400,
        )
    msg_id = body.get("id")
    has_id = "id" in body
    if "method" in body:
        method = body["method"]
        if not isinstance(method, str) or (has_id and not _valid_id(msg_id)):
            raise RpcError(
                INVALID_REQUEST,
                "Invalid Request: method must be a string, and id a string or an integer",
                status=400,
                id=msg_id if _valid_id(msg_id) else None,
            )
        return Message(msg_id if has_id else None, method, body.get("params"))
    if _valid_id(msg_id) and ("result" in body or "error" in body):
        return Message(msg_id, None, None)
    raise RpcError(
        INVALID_REQUEST,
        "Invalid Request: neither a request, a notification nor a response",
        status=400,
    )
