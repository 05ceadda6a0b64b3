"""`format=auto`: pick the converter from the first record.

Each format has a shape no other shares, so the first record decides:
JSON-RPC, the tap's `{"kind","method","payload"}` envelope or an ACP v1 recorder's
`{"kind": "initialize" | "sessionUpdate" | …, "payload"}` → ACP; `{"type": "thread.*" |
"turn.*" | "item.*"}` → `codex exec --json`; `session_meta`/`response_item`/`event_msg` → a
Codex rollout; `system`/`assistant`/`user`/`result`/`stream_event` with `session_id` → Claude
stream-json; anything else → public event objects (`format=events`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sidemirror.sources.base import Converter, ConverterFactory, Emitted

_STREAM_JSON_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
_ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})


def _acp_envelope(record: dict[str, Any]) -> bool:
    """A recorder's envelope: `kind` and `payload` and no `type` (which every other format has);
    `method` is there in the tap's, and the v1 recordings name the call in `kind` instead."""
    return (
        isinstance(record.get("kind"), str)
        and isinstance(record.get("payload"), dict)
        and "type" not in record
    )


def detect(record: dict[str, Any]) -> str:
    kind = record.get("type")
    if "jsonrpc" in record or _acp_envelope(record):
        return "acp"
    if isinstance(kind, str) and kind.startswith(("thread.", "turn.", "item.")):
        return "codex-exec"
    if kind in _ROLLOUT_TYPES and "payload" in record:
        return "codex-rollout"
    if kind in _STREAM_JSON_TYPES and "session_id" in record:
        return "stream-json"
    return "events"


class AutoConverter:
    """Delegates to the converter the first record calls for."""

    def __init__(self, default_session: str, formats: Mapping[str, ConverterFactory]) -> None:
        # The formats table is passed in (registry.py owns it), so this module imports no agent.
        self.formats = formats
        self.default_session = default_session
        self.inner: Converter | None = None
        self.agent = "events"
        self.run_status: str | None = None

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        if self.inner is None:
            fmt = detect(record)
            factory = self.formats[fmt]
            self.inner = factory(self.default_session)
            self.agent = self.inner.agent
        out = self.inner.convert(record)
        self.run_status = getattr(self.inner, "run_status", None)
        return out

    def finish(self) -> list[Emitted]:
        if self.inner is None:
            return []
        out = self.inner.finish()
        self.run_status = getattr(self.inner, "run_status", None)
        return out
