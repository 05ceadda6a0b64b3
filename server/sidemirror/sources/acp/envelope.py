"""The shapes ACP traffic arrives in, reduced to one: (kind, method, payload).

- `sidemirror acp-tap` (and claude-agent-acp's v2 recordings): `{"kind": "notification" |
  "request" | "response", "method", "payload", "ts"?}`;
- claude-agent-acp's v1 recordings name the call instead: `{"kind": "sessionUpdate" |
  "promptResponse" | "requestPermission" | "newSession" | "loadSession" | …, "payload"}`;
- raw JSON-RPC messages (`{"jsonrpc", "method", "params"}`); a response names no method, so it
  carries its `id` for the converter to match with its request (and one whose result has a
  `stopReason` is a prompt's even unmatched);
- a client's stored update (`{"timestamp", "update": <session/update params>}`), the form ACP
  clients such as Multica persist sessions in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text

# claude-agent-acp's v1 recorder names each message by the client call it went through.
_NAMED_CALLS: dict[str, tuple[str, str]] = {
    "sessionUpdate": ("notification", "session/update"),
    "promptResponse": ("response", "session/prompt"),
    "requestPermission": ("request", "session/request_permission"),
    "newSession": ("response", "session/new"),
    "loadSession": ("response", "session/load"),
    "resumeSession": ("response", "session/resume"),
    "initialize": ("response", "initialize"),
}


@dataclass(frozen=True)
class Message:
    kind: str  # notification / request / response
    method: str
    payload: dict[str, Any]
    ts: str  # the recorder's timestamp, or "" (the converter stamps it)
    id: str = ""  # a raw JSON-RPC request's or response's id, as text


def read_message(record: dict[str, Any]) -> Message:
    """One record, whatever envelope it came in."""
    ts = _text(record.get("ts")) or _text(record.get("timestamp"))
    kind = _text(record.get("kind"))
    if kind and "payload" in record:
        payload = _dict(record.get("payload"))
        if "error" in record:
            payload = {**payload, "error": record["error"]}
        named = _NAMED_CALLS.get(kind)
        if named is not None and not record.get("method"):
            return Message(named[0], named[1], payload, ts)
        return Message(kind, _text(record.get("method")), payload, ts)
    method = _text(record.get("method"))
    rpc_id = _id(record.get("id"))
    if method:
        kind = "request" if "id" in record else "notification"
        return Message(kind, method, _dict(record.get("params")), ts, rpc_id)
    if isinstance(record.get("update"), dict) and "jsonrpc" not in record:
        return Message("notification", "session/update", _dict(record.get("update")), ts)
    result = _dict(record.get("result"))
    if record.get("error") is not None:
        result = {"error": record["error"]}
    method = "session/prompt" if "stopReason" in result else ""
    return Message("response", method, result, ts, rpc_id)


def _id(value: Any) -> str:
    # JSON-RPC ids are numbers or strings; 3 and "3" are different ids.
    if isinstance(value, bool) or value is None:
        return ""
    return f"{type(value).__name__}:{value}"


def error_text(error: Any) -> str:
    """A JSON-RPC error's message (and its data, when that is text)."""
    err = _dict(error)
    message = _text(err.get("message")) or (error if isinstance(error, str) else "")
    data = err.get("data")
    detail = _text(data) or _text(_dict(data).get("message"))
    return ": ".join(p for p in (message, detail) if p) or "The agent reported an error"
