"""Workspaces, sessions and their ordered item logs (sources rebuild them on every start).

An item's id is `<epoch>.<seq>`: its position in the session's source under that log's epoch.
Seqs increase along the log. Ingested logs number their items 1, 2, 3…; a transcript numbers
them from byte positions in its file (sources/claude/positions.py), so a tail can be parsed
without what precedes it. Sources keep logs append-only and deterministic (a transcript parsed
again yields the same items at the same positions; ingested data is replayed from its persisted
log), so ids survive restarts.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

from sidemirror.core.clock import now_iso
from sidemirror.core.host_link import HostLink
from sidemirror.core.hub import (
    EphemeralPublished,
    Hub,
    ItemPublished,
    ItemsPublished,
    LogReset,
    Message,
    SessionSwitched,
    StateChanged,
    session_topic,
    topic_session,
    workspace_topic,
)
from sidemirror.core.item_log import ItemLog
from sidemirror.core.models import SessionItem
from sidemirror.core.numbers import parse_count
from sidemirror.core.projection import Projector
from sidemirror.core.redact import redact_text
from sidemirror.core.redact_fields import RedactedText, redact_item_fields
from sidemirror.core.states import BUSY, IDLE_AFTER_S, SessionState, decide
from sidemirror.core.totals import SessionTotals

# The reason a session is `ended` when the file it was read from is gone (deleted or moved away).
FILE_REMOVED = "file removed"
PARSE_ERRORS_KEPT = 20  # `/health` `parse_errors_detail`: the latest this many


WORKSPACE_ID = re.compile(r"[0-9a-f]{12}")


def workspace_directory(directory: str) -> str:
    """The directory as the source records it (the agent's cwd, not resolved on this
    filesystem), without a trailing slash, and redacted: a path can hold a secret too."""
    return redact_text(directory.rstrip("/") or "/")


def workspace_id_for(directory: str) -> str:
    """First 12 hex digits of sha256 of `workspace_directory(directory)`. Hashing the redacted
    text keeps one id per workspace wherever it is named (a journal holds only the redacted
    directory), and changes nothing for a path without a secret."""
    return hashlib.sha256(workspace_directory(directory).encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class WorkspaceRef:
    id: str
    directory: str | None  # set when the caller named the workspace by its directory


def resolve_workspace(value: str) -> WorkspaceRef:
    """A workspace named either way callers name one: by id (12 hex digits) or by directory."""
    if WORKSPACE_ID.fullmatch(value):
        return WorkspaceRef(value, None)
    return WorkspaceRef(workspace_id_for(value), workspace_directory(value))


# (seq bound, count) -> (items, has_more): see SessionLog.earlier. Runs the read off the loop.
EarlierReader = Callable[[int, int], Awaitable[tuple[list[SessionItem], bool]]]
# Receives (epoch, items) batches from a worker thread: see SessionLog.scan.
ItemSink = Callable[[str, list[SessionItem]], None]

_REDACTED_WORKSPACE_FIELDS = frozenset({"directory", "name", "branch"})


@dataclass(eq=False, slots=True)  # ten thousand are listed: a `__dict__` each was ~220 B
class SessionLog:
    """One session's log and what listings show of it. `session_id` is redacted by its one
    maker (`Store.ensure_session`); `title` whenever it is set: both are shown in every
    listing and written to journals, so they never hold a secret."""

    workspace_id: str
    session_id: str
    agent: str
    epoch: str
    title = RedactedText()  # not a field: set after it is made, redacted (in `_redacted_title`)
    started_at: str | None = None
    last_activity: float = 0.0
    state: str = "idle"
    # What clients see: the state and why, where the state says too little (`waiting`:
    # `permission` or `input`; `ended`: e.g. `FILE_REMOVED`), and whether a hook or the agent's
    # protocol said it (`exact`) or it was inferred. The rule is core/states.py's.
    state_reason: str | None = None
    state_exact: bool = False
    # What the session's source last said (its transcript, process or file, or its protocol:
    # `source_exact`).
    source_state: str = "idle"
    source_reason: str | None = None
    source_exact: bool = False
    # Set on a sub-agent's own session (a Codex thread spawned by another): the spawning one.
    parent_id: str | None = None
    # The file a file source reads the session from (its transcript or rollout), shown on the
    # session's card; None for a pushed or forwarded session (no file on this machine).
    source_file: str | None = None
    # Where `items` spills once it is made: under the store's spill dir (None: never spills).
    spill_dir: Path | None = field(default=None, repr=False)
    # Sources index sessions from stats and file tails, and parse one only when it is first read.
    loader: Callable[[SessionLog], Awaitable[None]] | None = None
    # The load in progress: every reader awaits it, not only the first (see Store.load).
    loading: asyncio.Future[None] | None = None
    # Bytes of the source before the first item held: a huge transcript is read from a point
    # near its end, and what precedes that point is not parsed (sources/claude/sync.py).
    skipped_bytes: int = 0
    # Reads items of that skipped part on demand (core/history.py): given a seq bound and a
    # count, the last `count` items below the bound, oldest first, and whether more precede them.
    earlier: EarlierReader | None = None
    # And forward, from the session's start: given a seq bound and a count, the first `count`
    # items of the skipped part above the bound, oldest first, and whether more follow them.
    later: EarlierReader | None = None
    # Reads every item a load would give, in batches to a sink, without loading the session
    # (the search index's backfill: index/search_feed.py); False when it is loaded already.
    scan: Callable[[ItemSink], Awaitable[bool]] | None = None
    # Turns, tokens and cost so far (core/totals.py); None while unknown (not read yet).
    totals: SessionTotals | None = None

    # Newest items in memory with their projected JSON; older ones spilled (see item_log.py).
    # Made when first used: thousands of archived sessions are listed, few are ever read, and
    # an empty log is most of a listed session's memory.
    _items: ItemLog | None = field(default=None, repr=False)
    _redacted_title: str | None = field(default=None, repr=False)

    @property
    def items(self) -> ItemLog:
        if self._items is None:
            spill = None
            if self.spill_dir is not None:
                digest = hashlib.sha256(self.session_id.encode("utf-8")).hexdigest()[:16]
                spill = self.spill_dir / f"{self.workspace_id}-{digest}.jsonl"
            self._items = ItemLog(spill)
        return self._items

    @property
    def has_items(self) -> bool:
        """Whether any item is held, without making the log."""
        return self._items is not None and len(self._items) > 0

    def close(self) -> None:
        if self._items is not None:
            self._items.close()

    @property
    def cursor(self) -> str | None:
        return f"{self.epoch}.{self.items.last_seq}" if self.has_items else None

    def resume_point(self, item_id: str) -> int | None:
        """How many of this log's items the holder of `item_id` has, or None when the id names
        no item held (another epoch, a malformed id, or one before the first item held).
        `<epoch>.0` means "none yet" for a log held from its start."""
        epoch, dot, seq = item_id.rpartition(".")
        n = parse_count(seq)
        if not dot or epoch != self.epoch or n is None:
            return None
        if n == 0:
            return 0 if self.skipped_bytes == 0 else None
        index = self.items.index_of(n)
        return None if index is None else index + 1

    def item(self, item_id: str) -> SessionItem | None:
        point = self.resume_point(item_id)
        return self.items[point - 1] if point else None


@dataclass(frozen=True)
class ParseProblem:
    """Where a source could not read a line (or a whole file), and why: `offset` is the byte
    offset of the line's start, None when the problem is the file itself."""

    file: str | None
    offset: int | None
    reason: str


@dataclass
class SessionUpdate:
    """What a source learned about one session, applied in one step by `Store.write`."""

    items: Sequence[SessionItem] = ()
    # Partial text (`assistant_delta`): sent to live clients, never stored.
    live: Sequence[SessionItem] = ()
    errors: int = 0  # lines that could not be read, beyond those `problems` describe
    problems: Sequence[ParseProblem] = ()  # each one also counts as a parse error
    title: str | None = None
    started_at: str | None = None  # kept only if the session has none yet
    branch: str | None = None
    touched_at: float | None = None  # when the session was last active (Unix time)
    state: str | None = None
    state_exact: bool = False  # the agent's protocol said `state` (else inferred from a file)


# A transcript's last item of these says its turn is over (a `turn_duration` follows its
# turn's `turn_complete`).
TURN_ENDS = frozenset({"turn_complete", "turn_duration"})


def state_after(items: Sequence[SessionItem]) -> str | None:
    """A transcript's state from what it just wrote: idle after a turn ends, else running."""
    if not items:
        return None
    return "idle" if items[-1].type in TURN_ENDS else "running"


@dataclass(eq=False)
class Workspace:
    id: str
    directory: str
    agent: str
    name: str = ""
    branch: str | None = None
    pid: int | None = None
    last_activity: float = 0.0
    sessions: dict[str, SessionLog] = field(default_factory=dict)
    latest_session_id: str | None = None
    host: HostLink | None = None  # set on a forwarded host's workspace (`LABEL:/dir`)
    # Its sessions now `running` or `waiting` (kept by Store.refresh_state).
    busy: set[str] = field(default_factory=set)
    idle_after_s: float = IDLE_AFTER_S  # the store's (core/states.py)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.directory.rstrip("/").rsplit("/", 1)[-1] or self.directory

    def __setattr__(self, name: str, value: object) -> None:
        # As for SessionLog: what every workspace listing shows never holds a secret.
        if name in _REDACTED_WORKSPACE_FIELDS and isinstance(value, str):
            value = redact_text(value)
        super().__setattr__(name, value)

    @property
    def active(self) -> bool:
        """An agent process runs in it, one of its sessions is running or waiting, or it was
        written within the idle time: never inactive while a session of it is busy."""
        quiet = time.time() - self.last_activity
        return self.pid is not None or bool(self.busy) or quiet < self.idle_after_s

    def agent_alive(self, log: SessionLog) -> bool:
        """Whether the agent process running here is `log`'s: an agent writes one session at a
        time, the one written last (a sub-agent's thread shares its parent's process)."""
        if self.pid is None:
            return False
        latest = self.latest_session_id
        return latest is not None and latest in (log.session_id, log.parent_id)

    @property
    def all_files_removed(self) -> bool:
        logs = self.sessions.values()
        return bool(logs) and all(log.state_reason == FILE_REMOVED for log in logs)

    def latest_session(self) -> SessionLog | None:
        if self.latest_session_id is None:
            return None
        return self.sessions.get(self.latest_session_id)


# Called with every message the store publishes, before subscribers see it (the debug trace).
Tap = Callable[[SessionLog, Message], None]
# What hooks said of a log's state (None: nothing) and when a hook last named it (Unix time).
HookState = Callable[[SessionLog], tuple[SessionState | None, float]]


class Store:
    """The in-memory model every endpoint reads; sources write it, the hub tells subscribers."""

    def __init__(self, hub: Hub, projector: Projector, spill_dir: Path | None = None) -> None:
        self.hub = hub
        self.projector = projector
        # None keeps every item in memory (tests, tools); the server spills under its data dir.
        self.spill_dir = spill_dir
        self.workspaces: dict[str, Workspace] = {}
        self.parse_errors = 0
        # The latest problems, as `/health` shows them (redacted when counted).
        self.parse_error_details: deque[dict[str, Any]] = deque(maxlen=PARSE_ERRORS_KEPT)
        self.taps: list[Tap] = []
        self._unsent: list[tuple[SessionLog, SessionItem]] = []  # stored, not yet sent to the hub
        self._ws_ids: dict[str, str] = {}  # directory as named -> workspace id
        # Forwarded hosts by label, shared with their workspaces (sources/remote/).
        self.host_links: dict[str, HostLink] = {}
        self.hook_state: HookState | None = None  # set by attention/board.py
        # What else `sweep_states` re-applies the rule to (sessions known only from hooks).
        self.sweepers: list[Callable[[], None]] = []
        # Told of a session a client starts to follow (its stream, or its workspace's and it is
        # the latest there): a file source then watches its files closely (files/close_watch.py).
        self.follow_listeners: list[Callable[[SessionLog], None]] = []
        hub.on_subscribe.append(self._subscribed)
        self.idle_after_s = IDLE_AFTER_S  # core/states.py; `serve --idle-time`
        # Directory -> pid of the agent process running there, as the latest scan of this
        # machine's processes found it (sources/proc_watch.py): what a growing log's workspace
        # is given, without a scan of its own.
        self.agent_dirs: dict[str, int] = {}

    # --- workspaces and sessions ---

    def ensure_workspace(self, directory: str, agent: str) -> Workspace:
        # An archive lists thousands of sessions of a few hundred directories: hash each once.
        ws_id = self._ws_ids.get(directory)
        if ws_id is None:
            ws_id = self._ws_ids[directory] = workspace_id_for(directory)
        ws = self.workspaces.get(ws_id)
        if ws is None:
            ws = Workspace(ws_id, workspace_directory(directory), agent)
            ws.idle_after_s = self.idle_after_s
            self.workspaces[ws_id] = ws
        return ws

    def ensure_session(self, ws: Workspace, session_id: str, agent: str, epoch: str) -> SessionLog:
        # Sessions are known by their redacted id (the one every listing shows).
        session_id = redact_text(session_id)
        log = ws.sessions.get(session_id)
        if log is None:
            log = SessionLog(ws.id, session_id, agent, epoch, spill_dir=self.spill_dir)
            ws.sessions[session_id] = log
        return log

    async def load(self, log: SessionLog) -> None:
        """Parse a lazily indexed session before its items are read (once)."""
        if log.loading is None:
            loader, log.loader = log.loader, None
            if loader is None:
                return
            log.loading = asyncio.ensure_future(loader(log))
        # Concurrent readers (clients reconnecting after a restart) all wait for the same parse;
        # shielded so a reader that disconnects does not cancel it for the others.
        await asyncio.shield(log.loading)

    def workspace(self, ws_id: str) -> Workspace | None:
        return self.workspaces.get(ws_id)

    def workspaces_by_activity(self) -> list[Workspace]:
        """Listed workspaces, newest activity first: one whose every session's file was removed
        is not listed (it comes back with a file)."""
        listed = (w for w in self.workspaces.values() if not w.all_files_removed)
        return sorted(listed, key=lambda w: w.last_activity, reverse=True)

    def touch(self, log: SessionLog, when: float | None = None) -> None:
        """Record activity; when the session becomes the workspace's newest, followers switch."""
        when = time.time() if when is None else when
        log.last_activity = max(log.last_activity, when)
        ws = self.workspaces[log.workspace_id]
        if log.last_activity > ws.last_activity:  # only then: each set runs Workspace's check
            ws.last_activity = log.last_activity
        latest = ws.latest_session()
        # Not a sub-agent's thread: followers stay on the thread that spawned it.
        newest = latest is None or log.last_activity >= latest.last_activity
        if log.parent_id is None and latest is not log and newest:
            ws.latest_session_id = log.session_id
            ws.agent = log.agent
            self._publish(log, SessionSwitched(log.session_id), to_session=False)
        # A write is a sign of life: a session idle for want of one may be running again.
        if log.source_state != "idle" or log.state != "idle":
            self.refresh_state(log)

    # --- the log ---

    def append(self, log: SessionLog, item: SessionItem) -> SessionItem:
        """Store and publish `item`. A source that numbers its items sets `item.seq`; otherwise
        (or if it would not increase) the item takes the next seq after the last."""
        try:
            self._store(log, item)
        finally:
            self._flush_items()
        return item

    def _store(self, log: SessionLog, item: SessionItem) -> None:
        """Append `item` and tell the taps (one by one). The hub is told once for all the items
        of one write (`_flush_items`), or sooner if a tap publishes something meanwhile (a
        state the item changed), so every subscriber still sees them in the order they happened."""
        redact_item_fields(item)  # the adapter redacted its text; this covers every other field
        last = log.items.last_seq
        seq = item.seq if item.seq > last else last + 1
        item.seq = seq
        item.id = f"{log.epoch}.{seq}"
        log.items.append(item)
        if len(log.items) == 1 and log.skipped_bytes == 0:
            log.totals = SessionTotals()  # held from its first item: counted from zero
        if log.totals is not None:
            log.totals.add(item)
        message = ItemPublished(log.session_id, item)
        for tap in self.taps:
            tap(log, message)
        self._unsent.append((log, item))

    def _flush_items(self) -> None:
        """Publish the items stored since the last flush, one hub entry per session."""
        unsent, self._unsent = self._unsent, []
        for _, group in groupby(unsent, key=lambda pair: id(pair[0])):
            pairs = list(group)
            log = pairs[0][0]
            self._send(log, ItemsPublished(log.session_id, tuple(i for _, i in pairs)), True)

    def adopt(self, log: SessionLog, item: SessionItem) -> SessionItem:
        """An item read back from the skipped part of a source (history), given its id and
        redacted as `append` would, without being stored or published: a later read of the same
        part gives the same item."""
        redact_item_fields(item)
        item.id = f"{log.epoch}.{item.seq}"
        return item

    def publish_ephemeral(self, log: SessionLog, item: SessionItem) -> None:
        """Send a live-only item (partial text) to subscribers without storing it.

        It gets no id (so no SSE `id:` line and Last-Event-ID stays on stored items) and the seq
        of the last stored item; snapshots and replays never contain it.
        """
        redact_item_fields(item)
        if not self.projector.live.cut(log.session_id, item):
            return  # the segment passed `max_chars`: its cut marker already went out
        item.id = ""
        item.seq = log.items.last_seq
        self._publish(log, EphemeralPublished(log.session_id, item, len(log.items)))

    def reset(self, log: SessionLog, epoch: str) -> None:
        """The source's log stopped being append-only: start over under a new epoch."""
        log.epoch = epoch
        log.items.clear()
        log.skipped_bytes = 0
        log.earlier = log.later = None
        log.totals = None  # of the old bytes: counted again as the new log is read
        self._publish(log, LogReset(log.session_id, epoch))

    def start_epoch(self, log: SessionLog, epoch: str) -> None:
        """A source (re)built the log under `epoch`: a reset if clients may hold old ids, else a
        plain relabel, since nothing was published under the old epoch."""
        if log.items:
            self.reset(log, epoch)
        else:
            log.epoch = epoch

    def write(self, log: SessionLog, update: SessionUpdate) -> None:
        """The one way a session's items and facts reach the store, whatever their source
        (a followed file, an ingest request, a journal replayed at start)."""
        if update.errors:
            self.count_parse_error(update.errors)
        for problem in update.problems:
            self.count_parse_error(problem=problem)
        try:
            for item in update.items:
                self._store(log, item)
        finally:
            self._flush_items()  # one hub entry for the whole write (hub.py says why)
        for item in update.live:
            self.publish_ephemeral(log, item)
        log.title = update.title or log.title
        log.started_at = log.started_at or update.started_at
        ws = self.workspaces.get(log.workspace_id)
        if ws is not None and update.branch:
            ws.branch = update.branch
        if update.touched_at is not None:
            self.touch(log, update.touched_at)
        if update.state is not None:
            self.set_state(log, update.state, exact=update.state_exact)

    def set_state(
        self, log: SessionLog, state: str, reason: str | None = None, *, exact: bool = False
    ) -> None:
        """What the session's source says its state is now, and why (e.g. `FILE_REMOVED`);
        `exact` when the agent's protocol said it (not inferred from a file)."""
        log.source_state, log.source_reason, log.source_exact = state, reason, exact
        self.refresh_state(log)

    def session_state(self, log: SessionLog, now: float | None = None) -> SessionState:
        """The state clients see for `log`: core/states.py's rule, applied to what its source and
        hooks said, its workspace's agent process and its last sign of life."""
        hook, hooked_at = self.hook_state(log) if self.hook_state is not None else (None, 0.0)
        ws = self.workspaces.get(log.workspace_id)
        now = time.time() if now is None else now
        return decide(
            SessionState(log.source_state, log.source_reason, log.source_exact),
            hook,
            agent_alive=ws is not None and ws.agent_alive(log),
            quiet_s=now - max(log.last_activity, hooked_at),
            idle_after_s=self.idle_after_s,
        )

    def refresh_state(self, log: SessionLog) -> None:
        """Publish the state clients see, if it changed."""
        new = self.session_state(log)
        ws = self.workspaces.get(log.workspace_id)
        if ws is not None:
            if new.state in BUSY:
                ws.busy.add(log.session_id)
            else:
                ws.busy.discard(log.session_id)
        if (log.state, log.state_reason, log.state_exact) == (new.state, new.reason, new.exact):
            return
        log.state, log.state_reason, log.state_exact = new.state, new.reason, new.exact
        self._publish(log, StateChanged(log.session_id, new.state, new.reason, new.exact))

    def sweep_states(self) -> None:
        """Apply the rule again to every running or waiting session: time alone (the idle
        time passing, an agent process exiting) makes one idle. Run on a timer (app.py)."""
        for ws in list(self.workspaces.values()):
            for session_id in list(ws.busy):
                log = ws.sessions.get(session_id)
                if log is None:
                    ws.busy.discard(session_id)
                else:
                    self.refresh_state(log)
        for sweep in self.sweepers:
            sweep()

    def _publish(self, log: SessionLog, message: Message, *, to_session: bool = True) -> None:
        """The one way out of the store: the taps, then the session's and the workspace's
        subscribers (a switch of the followed session concerns only the workspace's)."""
        for tap in self.taps:
            tap(log, message)
        self._flush_items()
        self._send(log, message, to_session)

    def _send(self, log: SessionLog, message: Message, to_session: bool) -> None:
        if to_session:
            self.hub.publish(session_topic(log.workspace_id, log.session_id), message)
        self.hub.publish(workspace_topic(log.workspace_id), message)

    def followed(self, log: SessionLog) -> bool:
        """Whether a client streams the session, or its workspace (and so any new session of
        it): their writes are read at once, the others' may wait a little (files/close_watch.py)."""
        hub = self.hub
        return hub.has_subscribers(workspace_topic(log.workspace_id)) or hub.has_subscribers(
            session_topic(log.workspace_id, log.session_id)
        )

    def _subscribed(self, topic: str) -> None:
        named = topic_session(topic) if self.follow_listeners else None
        ws = self.workspaces.get(named[0]) if named is not None else None
        if named is None or ws is None:
            return
        log = ws.latest_session() if named[1] is None else ws.sessions.get(named[1])
        if log is not None:
            for listener in self.follow_listeners:
                listener(log)

    def wire_json(self, log: SessionLog, index: int) -> str:
        """The projected (redacted, truncated) one-line JSON of item `index` (0-based)."""
        return log.items.wire_json(index, self.projector.to_json)

    def item_and_wire(self, log: SessionLog, index: int) -> tuple[SessionItem, str]:
        """Item `index` and its projected JSON, reading a spilled item from disk once."""
        return log.items.item_and_wire(index, self.projector.to_json)

    def iter_wire(self, log: SessionLog, start: int, stop: int | None = None) -> Iterator[str]:
        stop = len(log.items) if stop is None else stop
        for index in range(start, stop):
            yield self.wire_json(log, index)

    def count_parse_error(self, n: int = 1, problem: ParseProblem | None = None) -> None:
        """Count `n` unreadable lines, or one described by `problem`. The file is a local path
        of the user's own; it goes through the same redaction as transcript text before it is
        kept, since `/health` shows it to anything on the machine."""
        self.parse_errors += n
        if problem is not None:
            self.parse_error_details.append(
                {
                    "file": None if problem.file is None else redact_text(problem.file),
                    "offset": problem.offset,
                    "reason": redact_text(problem.reason),
                    "at": now_iso(),
                }
            )

    def close(self) -> None:
        for ws in self.workspaces.values():
            for log in ws.sessions.values():
                log.close()
