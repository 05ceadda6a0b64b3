"""`format=events`: NDJSON of public event objects, as the session stream sends them.

For tests, tools and agents that already speak the protocol: each line is validated against the
event models (docs/protocol.md) and redacted like any other source's items.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from sidemirror.core.clock import now_iso
from sidemirror.core.models import SESSION_ITEM_ADAPTER
from sidemirror.core.redact import redact_json
from sidemirror.sources.base import Emitted


class EventsConverter:
    """One public event object per record."""

    agent = "events"

    def __init__(self, default_session: str) -> None:
        self.default_session = default_session

    def convert(self, record: dict[str, Any]) -> list[Emitted]:
        data = {k: v for k, v in record.items() if k not in ("id", "seq", "session")}
        session = str(record.get("session") or self.default_session)
        redacted = redact_json(data)
        assert isinstance(redacted, dict)
        redacted.setdefault("ts", now_iso())
        try:
            item = SESSION_ITEM_ADAPTER.validate_python(redacted)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(
                f"invalid {record.get('type')!r} event: {where}: {first['msg']}"
            ) from None
        return [Emitted(session, item)]

    def finish(self) -> list[Emitted]:
        return []
