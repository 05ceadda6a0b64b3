"""Browser ↔ session: which tool call caused which activity entry.

A browser tool call (by name, see calls.py, or because an entry named its id) is linked to the
activity entries of its workspace whose time falls between the call's start and its result; an
entry inside several windows (parallel calls) goes to the one that started last, the innermost.
An entry reported with a `tool_use_id` is linked to that call whatever its time.

Nothing here is stored: links are derived from the session logs and the activity log, which
both survive a restart, so the links do too. Entries are annotated on their way out (a copy with
`tool_use_id` and `link`); the entries held in the activity log are never changed.
"""

from __future__ import annotations

import bisect
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sidemirror.activity.calls import Call, SessionCalls, to_epoch
from sidemirror.activity.log import RING_SIZE, ActivityLog
from sidemirror.core.models import ActivityEntry
from sidemirror.core.store import SessionLog, Store, Workspace

# A window is looked for at most this far back from an entry: bounds the search, and a call
# left open by a crashed agent cannot swallow everything after it.
MAX_CALL_S = 1800.0
MAX_SCANNED_SESSIONS = 256
# Sessions not read yet that annotating one batch of streamed entries may read.
MAX_LOADS_TO_ANNOTATE = 4


def _is_read(log: SessionLog) -> bool:
    return log.loader is None and (log.loading is None or log.loading.done())


def _may_overlap(log: SessionLog, span: tuple[float, float] | None) -> bool:
    """Whether the session can hold a call running in `span`: it was active at most one call's
    length before the first entry, and had started by the last one (unknown times: maybe)."""
    if span is None:
        return True
    first, last = span
    if log.last_activity and log.last_activity < first - MAX_CALL_S:
        return False
    started = to_epoch(log.started_at)
    return started is None or started <= last + 1.0


@dataclass
class WorkspaceCalls:
    """A workspace's tool calls at one moment: every call by id, browser calls by start."""

    by_id: dict[str, Call] = field(default_factory=dict)
    browser: list[Call] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)

    def call_for(self, entry: ActivityEntry, now: float) -> Call | None:
        if entry.tool_use_id is not None:
            return self.by_id.get(entry.tool_use_id)
        when = to_epoch(entry.ts)
        if when is None:
            return None
        # Latest start first: the innermost of overlapping windows.
        for index in range(bisect.bisect_right(self.starts, when) - 1, -1, -1):
            call = self.browser[index]
            if call.start < when - MAX_CALL_S:
                break
            if call.contains(when, now):
                return call
        return None


def linked(entry: ActivityEntry, call: Call) -> ActivityEntry:
    return entry.model_copy(update={"tool_use_id": call.tool_use_id, "link": call.link()})


class BrowserLinks:
    """Links entries to tool calls for one server (store + activity log)."""

    def __init__(self, store: Store, activity: ActivityLog) -> None:
        self.store = store
        self.activity = activity
        # Scanned sessions, least recently used first: bounded, a rescan is only a re-read.
        self._scanned: OrderedDict[tuple[str, str], SessionCalls] = OrderedDict()

    async def workspace_calls(
        self,
        ws: Workspace,
        span: tuple[float, float] | None = None,
        named: Sequence[str] = (),
        max_loads: int | None = None,
    ) -> WorkspaceCalls:
        """The calls of the workspace's sessions that may hold a call of the time `span` (first,
        last entry; all sessions when None). `named` are call ids entries reported, whose calls
        count as browser calls. Sessions not read yet are read, at most `max_loads` of them (the
        newest): the activity stream must not parse a whole archive to annotate old entries."""
        out = WorkspaceCalls()
        candidates = [log for log in list(ws.sessions.values()) if _may_overlap(log, span)]
        unread = [log for log in candidates if not _is_read(log)]
        if max_loads is not None and len(unread) > max_loads:
            unread.sort(key=lambda log: log.last_activity, reverse=True)
            skipped = {id(log) for log in unread[max_loads:]}
            candidates = [log for log in candidates if id(log) not in skipped]
        for log in candidates:
            await self.store.load(log)
            scanned = self._calls_of(ws.id, log)
            out.by_id.update(scanned.calls)
        wanted = set(named)
        browser = [c for c in out.by_id.values() if c.browser or c.tool_use_id in wanted]
        browser.sort(key=lambda c: c.start)
        out.browser = browser
        out.starts = [c.start for c in browser]
        return out

    def _calls_of(self, ws_id: str, log: SessionLog) -> SessionCalls:
        key = (ws_id, log.session_id)
        scanned = self._scanned.get(key)
        if scanned is None:
            scanned = self._scanned[key] = SessionCalls(log.session_id, log.agent)
            while len(self._scanned) > MAX_SCANNED_SESSIONS:
                self._scanned.popitem(last=False)
        self._scanned.move_to_end(key)
        scanned.update(log)
        return scanned

    async def calls_for(self, entries: Sequence[ActivityEntry]) -> list[Call | None]:
        """The call that explains each entry, or None."""
        out: list[Call | None] = [None] * len(entries)
        groups: dict[str, list[int]] = {}
        for index, entry in enumerate(entries):
            if entry.workspace is not None:
                groups.setdefault(entry.workspace, []).append(index)
        now = time.time()
        for ws_id, indexes in groups.items():
            ws = self.store.workspace(ws_id)
            if ws is None:
                continue
            times = [t for t in (to_epoch(entries[i].ts) for i in indexes) if t is not None]
            named = [n for n in (entries[i].tool_use_id for i in indexes) if n]
            span = (min(times), max(times)) if times else None
            calls = await self.workspace_calls(ws, span, named, max_loads=MAX_LOADS_TO_ANNOTATE)
            for index in indexes:
                out[index] = calls.call_for(entries[index], now)
        return out

    async def annotate(self, entries: Sequence[ActivityEntry]) -> list[ActivityEntry]:
        """Copies of `entries` with `tool_use_id` and `link` set where a call explains them."""
        return [
            entry if call is None else linked(entry, call)
            for entry, call in zip(entries, await self.calls_for(entries), strict=True)
        ]

    async def wire_json(self, entries: Sequence[ActivityEntry]) -> list[str]:
        """Each entry's JSON as `annotate` would give it, without copying a model per entry (the
        activity stream sends a thousand at once): the link's JSON is made once per call and
        joined to the entry's; `tool_use_id` and `link` are the model's last fields."""
        out = []
        for entry, call in zip(entries, await self.calls_for(entries), strict=True):
            text = entry.model_dump_json()
            if call is not None:
                named = (
                    "" if entry.tool_use_id else f',"tool_use_id":{json.dumps(call.tool_use_id)}'
                )
                text = f'{text[:-1]}{named},"link":{call.link_json()}}}'
            out.append(text)
        return out

    async def session_calls(self, ws: Workspace, log: SessionLog) -> SessionCalls:
        """One session's calls (the session read first if it was not)."""
        await self.store.load(log)
        return self._calls_of(ws.id, log)

    async def entries_of_call(
        self, ws: Workspace, log: SessionLog, tool_use_id: str
    ) -> tuple[Call | None, list[ActivityEntry]]:
        """The call of session `log` and the entries linked to it, oldest first (from the
        entries still held). Only the sessions that may have run a call at the same time are
        read: a workspace's archive is not parsed for one tool card."""
        call = (await self.session_calls(ws, log)).calls.get(tool_use_id)
        if call is None:
            return None, []
        held = self.activity.entries(ws.id, RING_SIZE)
        now = time.time()
        span = (call.start, now if call.end is None else call.end)
        named = [n for n in (e.tool_use_id for e in held) if n]
        calls = await self.workspace_calls(ws, span, named)
        mine = [e for e in held if (c := calls.call_for(e, now)) and c.tool_use_id == tool_use_id]
        return call, [linked(e, call) for e in mine]
