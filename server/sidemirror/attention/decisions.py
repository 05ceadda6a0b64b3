"""Permission requests held until the user decides in the panel, and what each decision was.

A Claude Code `PermissionRequest` hook is held open by the server (web/hooks.py) while its
request is pending here. It ends one of four ways: the panel allows, the panel denies (with an
optional message to the agent), the timeout passes (no answer: the terminal asks as usual), or
the transcript moves on first (the user answered in the terminal). Each request id can be
answered once; answering an id again, or one never issued, is refused.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from sidemirror.core.clock import iso_from_epoch

By = Literal["panel", "timeout", "terminal", "gone"]
ANSWERED_KEPT = 1024  # ids remembered after their answer, to tell "already answered" apart


@dataclass(frozen=True)
class Answer:
    behavior: Literal["allow", "deny"] | None  # None: no decision (the terminal asks)
    by: By
    message: str = ""
    at: float = field(default_factory=time.time)


@dataclass(eq=False)
class Pending:
    id: str
    workspace: str
    session: str
    tool_name: str
    tool_input: Any  # redacted
    asked_at: float
    future: asyncio.Future[Answer]

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace": self.workspace,
            "session": self.session,
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "asked_at": iso_from_epoch(self.asked_at),
        }


class AlreadyAnswered(Exception):
    pass


class Decisions:
    def __init__(self) -> None:
        self.pending: dict[str, Pending] = {}
        self.answered: OrderedDict[str, Answer] = OrderedDict()

    def open(self, workspace: str, session: str, tool_name: str, tool_input: Any) -> Pending:
        loop = asyncio.get_running_loop()
        request = Pending(
            secrets.token_urlsafe(16),
            workspace,
            session,
            tool_name,
            tool_input,
            time.time(),
            loop.create_future(),
        )
        self.pending[request.id] = request
        return request

    def answer(self, request_id: str, answer: Answer) -> Pending:
        """Settle a pending request; KeyError for an id never issued, AlreadyAnswered for one
        settled before (a replayed decision)."""
        request = self.pending.pop(request_id, None)
        if request is None:
            if request_id in self.answered:
                raise AlreadyAnswered(request_id)
            raise KeyError(request_id)
        self._remember(request_id, answer)
        if not request.future.done():
            request.future.set_result(answer)
        return request

    def close(self, request: Pending, answer: Answer) -> None:
        """The hook's wait ended without a decision from the panel (timeout, gone)."""
        if self.pending.pop(request.id, None) is not None:
            self._remember(request.id, answer)

    def moved_on(self, workspace: str, session: str) -> None:
        """The session's transcript moved on: its pending requests were answered elsewhere."""
        for request in [
            p
            for p in self.pending.values()
            if (p.workspace, p.session)
            == (
                workspace,
                session,
            )
        ]:
            self.answer(request.id, Answer(None, "terminal"))

    def listing(self) -> list[dict[str, Any]]:
        return [p.describe() for p in sorted(self.pending.values(), key=lambda p: p.asked_at)]

    def _remember(self, request_id: str, answer: Answer) -> None:
        self.answered[request_id] = answer
        while len(self.answered) > ANSWERED_KEPT:
            self.answered.popitem(last=False)
