"""One ingest run: pushed records of one request (or WebSocket) through a format converter.

Each record goes through a converter (an adapter: it knows the source format and emits redacted
canonical items), is appended to the session's ingest journal under the data dir, and only then
published, so ingested sessions survive a restart with the same ids.
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.jsonline import decode_line
from sidemirror.core.redact import redact_text
from sidemirror.core.redact_fields import redact_item_fields
from sidemirror.core.store import Store
from sidemirror.ingest.journal import IngestJournal
from sidemirror.sources.base import Converter, Emitted
from sidemirror.sources.registry import CONVERTERS

MAX_ERRORS_SHOWN = 5


class IngestRun:
    """One request's worth of records: converter state plus accept/reject counts."""

    def __init__(
        self, store: Store, journal: IngestJournal, workspace: str, fmt: str, session: str | None
    ) -> None:
        factory = CONVERTERS.get(fmt)
        if factory is None:
            raise ValueError(
                f"unknown format {fmt!r}; expected one of {', '.join(sorted(CONVERTERS))}"
            )
        self.store = store
        self.journal = journal
        self.workspace = workspace
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
        self.store.count_parse_error()
        if len(self.errors) < MAX_ERRORS_SHOWN:
            self.errors.append(redact_text(reason)[:200])  # a reason may quote the record

    def _apply(self, emitted: list[Emitted]) -> None:
        for e in emitted:
            _redact(e)
            self.journal.write(self.store, self.workspace, self.converter.agent, e)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": self.accepted, "rejected": self.rejected}
        if self.errors:
            out["errors"] = self.errors
        status = getattr(self.converter, "run_status", None)
        if status is not None:
            out["status"] = status
        return out


def _redact(emitted: Emitted) -> None:
    """Every field of what a converter emitted, redacted before the journal writes it (the
    converter redacted the text; ids, names and `model` come from the same records). The store
    knows sessions by their redacted id, so the journal must look them up by it too."""
    emitted.session_id = redact_text(emitted.session_id)
    if emitted.title is not None:
        emitted.title = redact_text(emitted.title)
    if emitted.item is not None:
        redact_item_fields(emitted.item)
