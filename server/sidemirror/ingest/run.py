"""One ingest run: pushed records of one request (or WebSocket) through a format converter.

Each record goes through a converter (an adapter: it knows the source format and emits redacted
canonical items), is appended to the session's ingest journal under the data dir, and only then
published, so ingested sessions survive a restart with the same ids.

Lines are applied in slices (`SliceSize`, or `SLICE_SECONDS` of converting), with a yield to
the event loop after each, so a body of any size never stalls other requests. A line
is stored whole or not at all; when the disk refuses one, the run stops there (`NotStored` says
which line) and nothing after it is applied.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any, Literal

from sidemirror.core.durable import StorageError
from sidemirror.core.jsonline import decode_line
from sidemirror.core.redact import redact_text
from sidemirror.core.redact_fields import redact_item_fields
from sidemirror.core.store import Store
from sidemirror.ingest.journal import IngestJournal, SessionJournal
from sidemirror.sources.base import Converter, Emitted
from sidemirror.sources.registry import CONVERTERS

MAX_ERRORS_SHOWN = 5
SLICE_SECONDS = 0.002  # of converting, at most, before the lines so far are applied

_Status = Literal["accepted", "rejected", "blank", "closing"]


class SliceSize:
    """How many lines to apply before yielding, adapted to what each slice costs the loop.

    Publishing a slice wakes every client streaming the session, and they all write before the
    loop comes back: with 50 clients that fan-out, not the ingest, is most of an iteration. So
    the slice halves while the loop takes longer than `TARGET_S` to come back, and doubles
    while it comes back quickly (no clients: big slices, full speed)."""

    TARGET_S = 0.010
    MIN, START, MAX = 8, 64, 1024

    def __init__(self) -> None:
        self.lines = self.START

    def after_yield(self, took: float) -> None:
        if took > self.TARGET_S:
            self.lines = max(self.MIN, self.lines // 2)
        elif took < self.TARGET_S / 4:
            self.lines = min(self.MAX, self.lines * 2)


class NotStored(Exception):
    """The disk refused a line: lines from `first_unstored_line` on were not stored."""

    def __init__(self, first_unstored_line: int, error: StorageError) -> None:
        super().__init__(str(error))
        self.first_unstored_line = first_unstored_line
        self.error = error


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
        self.lines = 0  # lines fed so far: the index of the next one
        self._pending: list[tuple[_Status, list[Emitted]]] = []
        self._pending_from = 0  # the line index of _pending[0]
        self._unsynced: set[SessionJournal] = set()
        self._synced_lines = 0  # lines before this index are acknowledged
        self._slice = SliceSize()

    def feed_line(self, raw: bytes | str) -> None:
        """Convert one line; it is stored and published by the next `flush`."""
        line = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        self.lines += 1
        if not line.strip():
            self._pending.append(("blank", []))
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
        for e in emitted:
            _redact(e)
        self._pending.append(("accepted", emitted))

    async def feed(self, lines: Iterable[bytes | str]) -> None:
        """Convert, store and publish `lines` in slices, yielding to the loop between them."""
        started = time.monotonic()
        for raw in lines:
            self.feed_line(raw)
            if (
                len(self._pending) >= self._slice.lines
                or time.monotonic() - started > SLICE_SECONDS
            ):
                await self.flush()
                yielded = time.monotonic()
                await asyncio.sleep(0)
                started = time.monotonic()
                self._slice.after_yield(started - yielded)
        await self.flush()

    async def flush(self) -> None:
        """Store and publish the lines converted so far; raises `NotStored` at the first line
        the disk refused (the lines before it are stored and published)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        first = self._pending_from
        self._pending_from += len(pending)
        emitted = [records for _, records in pending]
        stored, written, error = await self.journal.commit(
            self.store, self.workspace, self.converter.agent, emitted
        )
        self._unsynced |= written
        for status, _ in pending[:stored]:
            self.accepted += status == "accepted"
            self.rejected += status == "rejected"
        if error is not None:
            raise NotStored(first + stored, error)

    async def sync(self) -> None:
        """Make every stored line durable before it is acknowledged (one fsync per journal)."""
        written, self._unsynced = self._unsynced, set()
        error = await self.journal.sync(self.store, written)
        if error is not None:
            raise NotStored(self._synced_lines, error)
        self._synced_lines = self.lines

    async def settle(self, refused: NotStored) -> NotStored:
        """After a refusal, make the lines stored before it durable; returns what to report
        (the sync's own refusal if it failed too)."""
        try:
            await self.sync()
        except NotStored as worse:
            return worse
        return refused

    async def finish(self) -> None:
        """Store what the converter held back for the end of the run, then sync."""
        closing = self.converter.finish()
        for e in closing:
            _redact(e)
        self._pending.append(("closing", closing))
        await self.flush()
        await self.sync()

    def _reject(self, reason: str) -> None:
        self._pending.append(("rejected", []))
        self.store.count_parse_error()
        if len(self.errors) < MAX_ERRORS_SHOWN:
            self.errors.append(redact_text(reason)[:200])  # a reason may quote the record

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": self.accepted, "rejected": self.rejected}
        if self.errors:
            out["errors"] = self.errors
        # ok / failed / stopped (cancelled or interrupted), from formats that report an outcome.
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
