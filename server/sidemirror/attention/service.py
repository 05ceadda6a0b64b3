"""The attention service the server holds: the board of states, the pending decisions, and
what ties them (a waiting session whose transcript moves on was answered in the terminal)."""

from __future__ import annotations

from sidemirror.attention.board import Board
from sidemirror.attention.decisions import Decisions
from sidemirror.attention.notes import Notes
from sidemirror.attention.questions import HeldQuestions
from sidemirror.core.store import Store


class Attention:
    def __init__(self, store: Store, decision_timeout_s: float) -> None:
        self.board = Board(store)
        self.decisions = Decisions()
        self.questions = HeldQuestions()  # AskUserQuestion inputs held open, for their answers
        self.notes = Notes()  # notes to the agent, queued per session until a hook carries them
        self.decision_timeout_s = decision_timeout_s
        self.board.moved_on.append(self.decisions.moved_on)
        self.board.held = self.decisions.holds
