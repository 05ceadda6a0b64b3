"""The one rule for a session's state, whatever shows it (docs/api.md, "Session states").

A session is `running`, `waiting` (`reason`: `permission` or `input`), `idle` or `ended`:

1. `ended` when its source says so (its file was removed) or a hook said so (`SessionEnd`).
2. Otherwise what Claude Code hooks said last, if any named it; else what its source says: a
   pushed protocol (stream-json, ACP, `codex exec --json`) says it exactly, a transcript or
   rollout only lets it be inferred (the last line ends a turn: idle; else running).
3. Then time: a `running` or `waiting` session with no live agent process and no sign of life
   (a write, a hook) for the idle time is `idle`. A transcript that stopped mid-turn would
   otherwise be running forever, and again after every restart. A session known only from its
   hooks (no transcript read) is swept the same way (attention/board.py).

`exact` says which: true when a hook or the agent's protocol said the state, false when it was
inferred from files, processes and time. The store applies this rule (Store.refresh_state), so
every listing, stream and tool shows the same state.
"""

from __future__ import annotations

from dataclasses import dataclass

# No write, no hook and no live agent process for this long: idle (`serve --idle-time`).
IDLE_AFTER_S = 120.0
BUSY = frozenset({"running", "waiting"})


@dataclass(frozen=True, slots=True)
class SessionState:
    state: str = "idle"
    reason: str | None = None
    exact: bool = False


def decide(
    source: SessionState,
    hook: SessionState | None,
    *,
    agent_alive: bool,
    quiet_s: float,
    idle_after_s: float,
) -> SessionState:
    """The state clients see. `quiet_s`: seconds since the last write or hook."""
    if source.state == "ended":
        return source
    said = source if hook is None else hook
    if said.state == "waiting" and said.reason is None:
        # A source that says `waiting` without why (ACP's `session/request_permission`,
        # `claude -p`'s `requires_action`) waits on a permission.
        said = SessionState("waiting", "permission", said.exact)
    if said.state in BUSY and not agent_alive and quiet_s >= idle_after_s:
        return SessionState("idle")
    return said
