"""Permission requests held until the user decides in the panel, and what each decision was.

A Claude Code `PermissionRequest` hook is held open by the server (web/hooks.py) while its
request is pending here. It ends one of four ways: the panel allows, the panel denies (with an
optional message to the agent), the timeout passes (no answer: the terminal asks as usual), or
the transcript moves on first (the user answered in the terminal). Each request changes state
exactly once, here: the timeout is this module's own timer, not the waiting hook's, so an Allow
that lands as the time runs out either wins (and the hook gets it) or is refused with the real
outcome; never both. Answering an id again, or one never issued, is refused.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from sidemirror.attention.card_input import Card
from sidemirror.attention.rules import card_rules
from sidemirror.core.clock import iso_from_epoch

By = Literal["panel", "timeout", "terminal", "gone"]
ANSWERED_KEPT = 1024  # ids remembered after their answer, to tell "already answered" apart
SETTLED_LISTED = 64  # of those, listed by `GET /api/decisions` with their outcome


@dataclass(frozen=True)
class Answer:
    behavior: Literal["allow", "deny"] | None  # None: no decision (the terminal asks)
    by: By
    message: str = ""
    at: float = field(default_factory=time.time)
    # The agent's own suggested rules the user applied with this Allow (attention/rules.py),
    # sent back unchanged as the decision's `updatedPermissions`.
    permissions: tuple[dict[str, Any], ...] = ()
    # An answered question (attention/questions.py): the tool's input with the user's answers.
    updated_input: dict[str, Any] | None = None


@dataclass(eq=False)
class Pending:
    id: str
    workspace: str
    session: str
    tool_name: str
    tool_input: Any  # redacted
    asked_at: float
    future: asyncio.Future[Answer]
    card: Card  # the whole input as the card shows it (attention/card_input.py)
    timer: asyncio.TimerHandle | None = None
    agent: str = "claude"
    # The permission updates the agent suggested, as sent (attention/rules.py).
    suggestions: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace": self.workspace,
            "session": self.session,
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "card": self.card.describe(),
            "asked_at": iso_from_epoch(self.asked_at),
            "agent": self.agent,
            "rules": card_rules(self.suggestions),
        }


class AlreadyAnswered(Exception):
    def __init__(self, request_id: str, answer: Answer) -> None:
        super().__init__(request_id)
        self.answer = answer


def outcome(answer: Answer) -> str:
    """How a request ended, in one word: allow, deny, timeout, terminal, gone."""
    return answer.behavior if answer.behavior is not None else answer.by


class Decisions:
    def __init__(self) -> None:
        self.pending: dict[str, Pending] = {}
        self.answered: OrderedDict[str, Answer] = OrderedDict()

    def open(
        self,
        workspace: str,
        session: str,
        tool_name: str,
        tool_input: Any,
        card: Card,
        timeout_s: float,
        agent: str = "claude",
        suggestions: list[dict[str, Any]] | None = None,
    ) -> Pending:
        loop = asyncio.get_running_loop()
        request = Pending(
            secrets.token_urlsafe(16),
            workspace,
            session,
            tool_name,
            tool_input,
            time.time(),
            loop.create_future(),
            card,
            agent=agent,
            suggestions=suggestions or [],
        )
        self.pending[request.id] = request
        request.timer = loop.call_later(timeout_s, self._expire, request.id)
        return request

    def get(self, request_id: str) -> Pending:
        """The pending request; KeyError / AlreadyAnswered as for `answer`."""
        request = self.pending.get(request_id)
        if request is None:
            self._refuse(request_id)
        return request

    def answer(self, request_id: str, answer: Answer) -> Pending:
        """Settle a pending request: its one state change. KeyError for an id never issued,
        AlreadyAnswered (with the answer it got) for one settled before."""
        request = self.pending.pop(request_id, None)
        if request is None:
            self._refuse(request_id)
        if request.timer is not None:
            request.timer.cancel()
        request.card.forget()  # revealed values live only while the request waits
        self._remember(request_id, answer)
        request.future.set_result(answer)
        return request

    def give_up(self, request: Pending) -> Answer:
        """The hook stopped waiting: settle as gone, unless something settled it first."""
        if request.id in self.pending:
            self.answer(request.id, Answer(None, "gone"))
        return request.future.result()

    def _expire(self, request_id: str) -> None:
        if request_id in self.pending:
            self.answer(request_id, Answer(None, "timeout"))

    def _refuse(self, request_id: str) -> NoReturn:
        done = self.answered.get(request_id)
        if done is not None:
            raise AlreadyAnswered(request_id, done)
        raise KeyError(request_id)

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

    def holds(self, workspace: str, session: str) -> bool:
        """Whether a permission request of this session is held open: its agent is there,
        waiting for the answer (a sign of life however long it waits)."""
        return any((p.workspace, p.session) == (workspace, session) for p in self.pending.values())

    def listing(self) -> list[dict[str, Any]]:
        return [p.describe() for p in sorted(self.pending.values(), key=lambda p: p.asked_at)]

    def settled(self) -> list[dict[str, str]]:
        """The requests settled last, oldest first, with how each ended: a card that drops out
        of the listing says what really happened, not a guess."""
        last = list(self.answered.items())[-SETTLED_LISTED:]
        return [{"id": request_id, "outcome": outcome(answer)} for request_id, answer in last]

    def _remember(self, request_id: str, answer: Answer) -> None:
        self.answered[request_id] = answer
        while len(self.answered) > ANSWERED_KEPT:
            self.answered.popitem(last=False)
