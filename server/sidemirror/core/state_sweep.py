"""Time makes a session idle: core/states.py's rule applied again on a timer.

A session that stops writing mid-turn sends nothing more, so no event would ever move it from
`running`; neither does an agent process exiting. Every `period` the store re-applies the rule to
its busy sessions (only those: a few, whatever the archive's size).
"""

from __future__ import annotations

import asyncio
import logging

from sidemirror.core.store import Store

logger = logging.getLogger(__name__)

MAX_PERIOD_S = 5.0  # how late past the idle time a session may turn idle, at most


async def sweep_states(store: Store) -> None:
    # A quarter of the idle time: a short one (tests) is kept to within a quarter of it.
    period = min(MAX_PERIOD_S, store.idle_after_s / 4)
    while True:
        await asyncio.sleep(period)
        try:
            store.sweep_states()
        except Exception:  # a bug in one pass must not stop the states from moving for good
            logger.exception("state sweep failed")
