"""Waiting for a state, never for a time: the one polling loop, sync and async.

A check is called until it returns something truthy (which is returned) or the bound passes;
the bound is sized for a loaded 2-core machine, not for how long things usually take. While a
server starts or restarts, reading it fails (refused connection, a 503, a half-written file):
those errors count as "not yet", and the last one is in the failure message.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

T = TypeVar("T")

# OSError covers refused connections and urllib's URLError/HTTPError; KeyError and ValueError a
# reply or file read while it is still being written.
NOT_YET = (OSError, KeyError, ValueError)


class WaitTimeout(AssertionError):
    """The state never came: what was awaited, and the last value or error seen."""


class _Tries:
    """The bookkeeping both loops share: the deadline, and the last thing a check gave."""

    def __init__(self, timeout: float, what: str) -> None:
        self.deadline = time.monotonic() + timeout
        self.timeout, self.what = timeout, what
        self.last: object = None

    def over(self, value: object) -> bool:
        """Whether to stop: the check gave something truthy; raises once the time is up."""
        self.last = value
        if value and not isinstance(value, NOT_YET):
            return True
        if time.monotonic() >= self.deadline:
            what = self.what or "the check"
            raise WaitTimeout(
                f"timed out after {self.timeout}s waiting for {what} (last: {value!r})"
            )
        return False


def wait_until(
    check: Callable[[], T], timeout: float = 10.0, what: str = "", step: float = 0.05
) -> T:
    tries = _Tries(timeout, what)
    while True:
        try:
            value: object = check()
        except NOT_YET as exc:
            value = exc
        if tries.over(value):
            return cast(T, value)
        time.sleep(step)


async def until(
    check: Callable[[], Awaitable[T] | T], timeout: float = 10.0, what: str = "", step: float = 0.05
) -> T:
    """`wait_until` inside an event loop: the check may be sync or async, and the loop runs
    (the server under test, a client's stream) between tries."""
    tries = _Tries(timeout, what)
    while True:
        try:
            got = check()
            value: object = await got if inspect.isawaitable(got) else got
        except NOT_YET as exc:
            value = exc
        if tries.over(value):
            return cast(T, value)
        await asyncio.sleep(step)
