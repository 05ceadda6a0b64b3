"""Time makes a session idle: core/states.py's rule applied again on a timer.

A session that stops writing mid-turn sends nothing more, so no event would ever move it from
`running`; neither does an agent process exiting. Every `period` the store re-applies the rule to
its busy sessions (only those: a few, whatever the archive's size).

The other way round: sources index archived sessions without reading them, and a session not
read has said no state (idle). One written within the idle time (at a restart, a session the
agent was writing a moment before) is read, so its state is the rule's, not that default.
"""

from __future__ import annotations

import asyncio
import logging
import time

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
            for log in _recent_unread(store):
                await store.load(log)
        except Exception:  # a bug in one pass must not stop the states from moving for good
            logger.exception("state sweep failed")


def _recent_unread(store: Store) -> list[SessionLog]:
    """Sessions not read yet that were written within the idle time (a few at most)."""
    since = time.time() - store.idle_after_s
    return [
        log
        for ws in list(store.workspaces.values())
        if ws.last_activity >= since
        for log in list(ws.sessions.values())
        if log.loader is not None and log.last_activity >= since
    ]
