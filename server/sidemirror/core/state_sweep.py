"""Time makes a session idle: core/states.py's rule applied again on a timer.

A session that stops writing mid-turn sends nothing more, so no event would ever move it from
`running`; neither does an agent process exiting. Every `period` the store re-applies the rule to
its busy sessions (only those: a few, whatever the archive's size).

The other way round: sources index archived sessions without reading them, and a session not
read has said no state (idle). The latest session of a workspace where an agent process runs
(at a restart, the one the agent is working on) is read, so its state is the rule's, not that
default. Only those: the rest stay unread until a client asks (archives are read lazily).
"""

from __future__ import annotations

import asyncio
import logging

from sidemirror.core.store import SessionLog, Store

logger = logging.getLogger(__name__)

MAX_PERIOD_S = 5.0  # how late past the idle time a session may turn idle, at most


async def sweep_states(store: Store) -> None:
    # A quarter of the idle time: a short one (tests) is kept to within a quarter of it.
    period = min(MAX_PERIOD_S, store.idle_after_s / 4)
    while True:
        await asyncio.sleep(period)
        try:
            store.sweep_states()
            for log in _unread_with_agent(store):
                await store.load(log)
        except Exception:  # a bug in one pass must not stop the states from moving for good
            logger.exception("state sweep failed")


def _unread_with_agent(store: Store) -> list[SessionLog]:
    """Workspaces' latest sessions not read yet whose agent process runs (a few at most)."""
    found = []
    for ws in list(store.workspaces.values()):
        log = ws.latest_session() if ws.pid is not None else None
        if log is not None and log.loader is not None:
            found.append(log)
    return found
