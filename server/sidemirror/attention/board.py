"""Every session's live state, as clients see it, and the stream of its changes.

The state itself is core/states.py's one rule, which the store applies; the board gives it what
hooks said (`hook_state`: exact, the moment it happens: a permission prompt, a question, the end
of a turn or of the session) and tracks each session's state as last shown, with `since`. Once a
session has sent a hook, its hooks are believed over the transcript, which says nothing while a
prompt waits (and is read a moment later).

Listed as live: every tracked session not ended, and every session with a sign of life in the
last `IDLE_FORGET_S` (after a restart too, in its state by the rule: a transcript that stopped
mid-turn half an hour ago is idle since then, not running since the restart).

Bounded: each entry's strings are capped (a path at PATH_MAX, an id at 200 characters, cut with
`…`), the board holds at most `MAX_TRACKED` entries, and an entry is forgotten once its session
ended or has been idle, untouched, for `IDLE_FORGET_S`. A forgotten session is shown as one
without hooks is (its transcript and process say its state) until a hook names it again.

A session known only from its hooks (no transcript read for it) follows the same rule: its
hooks say its state, and the state sweep makes it idle after the idle time without a hook or a
live agent process (`sweep`).

A session waiting for a permission or an answer moves on when its transcript shows the answer
(a tool result, a user message, the end of the turn): it was answered in the terminal.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sidemirror.attention.hook_events import StateSignal
from sidemirror.core.clock import iso_from_epoch, parse_ts
from sidemirror.core.hub import ItemPublished, Message, StateChanged
from sidemirror.core.models import SessionItem
from sidemirror.core.redact import redact_text
from sidemirror.core.states import BUSY, SessionState, decide
from sidemirror.core.store import SessionLog, Store, workspace_id_for
from sidemirror.core.truncate import truncate

# A session no hook or item has touched for this long is not listed as live (a crashed agent
# sends no SessionEnd).
LIVE_WINDOW_S = 12 * 3600.0
QUEUE_SIZE = 256
# Sessions remembered at once; past it, the longest untouched (waiting ones last) go first.
MAX_TRACKED = 1000
# An idle session untouched this long is forgotten (it is listed again if it wakes).
IDLE_FORGET_S = 30 * 60.0
CWD_MAX_CHARS = 4096  # PATH_MAX: no real working directory is longer
SESSION_MAX_CHARS = 200
# Items that show a waiting session got its answer.
_MOVED_ON = frozenset({"tool_result", "user", "turn_complete"})
# Claude Code stamps transcript lines with its own clock, read a moment after the hook.
CLOCK_SLACK_S = 1.0


def _capped(text: str, limit: int) -> str:
    """Redacted, then cut with a mark: a secret is recognised whole before any of it is cut."""
    return truncate(redact_text(text), limit)[0]


def _answers(item: SessionItem, waiting_since: float) -> bool:
    """Whether a transcript item shows the wait is over: a tool result, a user message or the
    end of the turn, recorded after the wait began (not history read for the first time)."""
    if item.type not in _MOVED_ON:
        return False
    when = parse_ts(item.ts)
    return when is not None and when.timestamp() >= waiting_since - CLOCK_SLACK_S


@dataclass(eq=False)
class Tracked:
    """What hooks said about one session, and the state last shown."""

    workspace: str
    session: str
    directory: str = ""
    agent: str = ""  # the agent whose hooks named it ("" when none did)
    question: str | None = None  # what it asks while it waits for an answer (asking.py)
    hook: StateSignal | None = None
    state: str = ""  # none shown yet: the first state is always sent
    reason: str | None = None
    exact: bool = False
    since: float = field(default_factory=time.time)
    touched: float = field(default_factory=time.time)


Listener = Callable[[str, str], None]


class Board:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.tracked: dict[tuple[str, str], Tracked] = {}
        self.queues: set[asyncio.Queue[dict[str, Any] | None]] = set()
        # Called with (workspace, session) when a waiting session's transcript moves on.
        self.moved_on: list[Listener] = []
        # Whether (workspace, session) has a hook request held open (a pending decision).
        self.held: Callable[[str, str], bool] = lambda _ws, _session: False
        store.taps.append(self._tap)
        store.hook_state = self._hook_state
        store.sweepers.append(self.sweep)

    # --- inputs ---

    def hook(
        self,
        cwd: str,
        session_id: str,
        signal: StateSignal | None,
        agent: str = "claude",
        question: str | None = None,
    ) -> Tracked:
        """A hook event arrived for this session (`signal` None: it said nothing of its state;
        `question`: what it now asks the user)."""
        directory = _capped(cwd, CWD_MAX_CHARS)
        key = (workspace_id_for(directory), _capped(session_id, SESSION_MAX_CHARS))
        t = self.tracked.get(key)
        if t is None:
            t = self._track(Tracked(*key, directory=directory))
        t.touched = time.time()
        t.agent = agent
        if question is not None:
            t.question = question
        elif signal is not None and (signal.state, signal.reason) != ("waiting", "input"):
            t.question = None  # it moved on (a reminder that it still waits keeps the question)
        if signal is not None:
            t.hook = signal
            self._refresh(t)
        self._forget_finished(keep=t)
        return t

    def announce(self, t: Tracked) -> None:
        """Send the session's state again, unchanged: its pending requests changed (a client
        showing them fetches them again)."""
        self._broadcast(self.describe(t))

    def set_hook_state(self, t: Tracked, signal: StateSignal) -> None:
        t.hook = signal
        self._refresh(t)

    def _tap(self, log: SessionLog, message: Message) -> None:
        t = self.tracked.get((log.workspace_id, log.session_id))
        if t is None:
            if isinstance(message, StateChanged):
                self._emit_log(log)
            return
        if isinstance(message, ItemPublished):
            t.touched = time.time()
            item = message.item
            if t.hook is not None and t.hook.state == "waiting" and _answers(item, t.since):
                t.hook = StateSignal("running")
                for listener in list(self.moved_on):
                    listener(t.workspace, t.session)
                self._refresh(t)
            elif (log.state, log.state_reason, log.state_exact) != (t.state, t.reason, t.exact):
                self.store.refresh_state(log)  # a log made after its first hook
        elif isinstance(message, StateChanged):
            self._emit(t, log)

    # --- the state clients see ---

    def _hook_state(self, log: SessionLog) -> tuple[SessionState | None, float]:
        """What hooks said of `log` (exact), and when one last named it."""
        t = self.tracked.get((log.workspace_id, log.session_id))
        return (None, 0.0) if t is None else self._said(t)

    def _said(self, t: Tracked) -> tuple[SessionState | None, float]:
        if t.hook is None:
            return None, 0.0
        # A hook held open for a decision is its agent waiting right now, however long ago it
        # was sent: never idle for want of a write.
        seen = time.time() if self.held(t.workspace, t.session) else t.touched
        return SessionState(t.hook.state, t.hook.reason, exact=True), seen

    def _hook_only_state(self, t: Tracked) -> SessionState:
        """The rule (core/states.py) for a session known only from its hooks: no transcript
        was read for it, so hooks alone say its state, and time makes it idle. The agent
        process of its workspace, if any, counts as its own while no session there was written
        since its last hook (an agent writes one session at a time)."""
        hook, seen = self._said(t)
        ws = self.store.workspace(t.workspace)
        alive = ws is not None and ws.pid is not None and ws.last_activity <= t.touched
        return decide(
            SessionState(),
            hook,
            agent_alive=alive,
            quiet_s=time.time() - seen,
            idle_after_s=self.store.idle_after_s,
        )

    def _refresh(self, t: Tracked) -> None:
        log = self._log(t)
        if log is not None:
            self.store.refresh_state(log)  # publishes StateChanged, which _tap emits
        elif t.hook is not None:
            self._change(t, self._hook_only_state(t), None)

    def sweep(self) -> None:
        """Time alone makes a busy session known only from hooks idle (the state sweep, with
        the store's own busy sessions: core/state_sweep.py)."""
        for t in list(self.tracked.values()):
            if t.state in BUSY and t.hook is not None and self._log(t) is None:
                self._change(t, self._hook_only_state(t), None)

    def _emit(self, t: Tracked, log: SessionLog) -> None:
        self._change(t, _shown(log), log)

    def _emit_log(self, log: SessionLog) -> None:
        ws = self.store.workspace(log.workspace_id)
        t = self._track(
            Tracked(log.workspace_id, log.session_id, directory=ws.directory if ws else "")
        )
        self._change(t, _shown(log), log)

    def _change(self, t: Tracked, new: SessionState, log: SessionLog | None) -> None:
        if (new.state, new.reason, new.exact) == (t.state, t.reason, t.exact):
            return
        # The last sign of life: a hook-only session's last hook.
        last = log.last_activity if log is not None else t.touched
        t.state, t.reason, t.exact, t.since = new.state, new.reason, new.exact, _since(new, last)
        self._broadcast(self.describe(t, log))

    def _log(self, t: Tracked) -> SessionLog | None:
        ws = self.store.workspace(t.workspace)
        return ws.sessions.get(t.session) if ws is not None else None

    def describe(self, t: Tracked, log: SessionLog | None = None) -> dict[str, Any]:
        log = log or self._log(t)
        ws = self.store.workspace(t.workspace)
        return {
            "workspace": t.workspace,
            "workspace_name": ws.name if ws else t.directory.rsplit("/", 1)[-1],
            "directory": ws.directory if ws else t.directory,
            "session": t.session,
            "agent": log.agent if log else (t.agent or "claude"),
            "state": t.state,
            "reason": t.reason,
            "exact": t.exact,
            "since": iso_from_epoch(t.since),
            "title": log.title if log else None,
            "question": t.question if t.state == "waiting" else None,
        }

    def live(self) -> list[dict[str, Any]]:
        """Every live session on the machine: tracked and not ended, touched recently; waiting
        ones first, then the most recently changed."""
        now = time.time()
        self._forget_finished()
        self._track_active_logs()
        rows = [
            t
            for t in self.tracked.values()
            if t.state != "ended" and now - max(t.touched, t.since) < LIVE_WINDOW_S
        ]
        rows.sort(key=lambda t: (t.state != "waiting", -t.since))
        return [self.describe(t) for t in rows]

    def _track_active_logs(self) -> None:
        """Sessions known only from their transcript are live while busy or recently written:
        after a restart too, each in its state by the rule (since its last write)."""
        recent = time.time() - IDLE_FORGET_S
        for ws in self.store.workspaces.values():
            for log in ws.sessions.values():
                key = (ws.id, log.session_id)
                if key in self.tracked or log.state == "ended":
                    continue
                if log.last_activity < recent and log.session_id not in ws.busy:
                    continue
                t = Tracked(*key, directory=ws.directory)
                t.state, t.reason, t.exact = log.state, log.state_reason, log.state_exact
                t.since = t.touched = log.last_activity
                self._track(t)

    # --- bounds ---

    def _track(self, t: Tracked) -> Tracked:
        """Remember `t`, first forgetting the longest untouched entries past `MAX_TRACKED`.
        A waiting session goes last: its pending request still needs its state."""
        excess = len(self.tracked) + 1 - MAX_TRACKED
        if excess > 0:
            by_age = sorted(self.tracked.values(), key=lambda o: (o.state == "waiting", o.touched))
            for old in by_age[:excess]:
                self._forget(old)
        self.tracked[(t.workspace, t.session)] = t
        return t

    def _forget_finished(self, keep: Tracked | None = None) -> None:
        """Forget sessions that ended (their end already sent), idle ones untouched for
        `IDLE_FORGET_S`, and any untouched past the live window."""
        now = time.time()
        for t in list(self.tracked.values()):
            quiet = now - max(t.touched, t.since)
            if (
                t.state == "ended"
                or (t.state == "idle" and quiet >= IDLE_FORGET_S)
                or quiet >= LIVE_WINDOW_S
            ) and (t is not keep or t.state == "ended"):
                self._forget(t)

    def _forget(self, t: Tracked) -> None:
        # Nothing is published: the log keeps the state last shown until its next change (a
        # refresh here would track it again, and past the cap forget another, and so on).
        self.tracked.pop((t.workspace, t.session), None)

    # --- the stream ---

    def subscribe(self) -> asyncio.Queue[dict[str, Any] | None]:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(QUEUE_SIZE)
        self.queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        self.queues.discard(queue)

    def _broadcast(self, change: dict[str, Any]) -> None:
        for queue in list(self.queues):
            try:
                queue.put_nowait(change)
            except asyncio.QueueFull:
                # A client that does not keep up gets the whole listing again (None: resync).
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)


def _shown(log: SessionLog) -> SessionState:
    return SessionState(log.state, log.state_reason, log.state_exact)


def _since(new: SessionState, last_life: float) -> float:
    """When the session entered `new`: now, except for an idle inferred from the time passed,
    which began at the session's last sign of life (a write; for a hook-only one, a hook)."""
    now = time.time()
    if new.state == "idle" and not new.exact and last_life:
        return min(now, last_life)
    return now
