"""Format converters for pushed data: one record in, canonical (redacted) items out.

`CONVERTERS` maps a `format=` value to a factory taking the default session id. Agent formats
(stream-json, ACP, codex-exec, auto) register here from `sources/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import ValidationError

from sidemirror.core.models import SESSION_ITEM_ADAPTER, SessionItem
from sidemirror.core.redact import redact_json


@dataclass
class Emitted:
    """What a converter produced for one session: an item and/or session metadata."""

    session_id: str
    item: SessionItem | None = None
    title: str | None = None
    state: str | None = None


class Converter(Protocol):
    agent: str

    def convert(self, record: dict[str, Any]) -> list[Emitted]: ...

    def finish(self) -> list[Emitted]: ...


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventsConverter:
    """`format=events`: NDJSON of public event objects (DESIGN §3), e.g. from tests or tools."""

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


CONVERTERS: dict[str, Callable[[str], Converter]] = {"events": EventsConverter}


def _agent_format(name: str) -> Callable[[str], Converter]:
    """Agent formats live in `sources/` and import this module, so they resolve at first use."""

    def factory(default_session: str) -> Converter:
        from sidemirror.sources.autodetect import AGENT_CONVERTERS

        return AGENT_CONVERTERS[name](default_session)

    return factory


CONVERTERS.update(
    {name: _agent_format(name) for name in ("stream-json", "acp", "codex-exec", "auto")}
)
