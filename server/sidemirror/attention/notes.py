"""Notes to the agent: typed in the panel, queued per session, delivered by its next hook.

A note (or a review, which is one note: attention/review_note.py) waits in its session's queue
until a hook event of that session can carry it: after a tool call (`PostToolUse`, as
`additionalContext`) or at the end of the turn (`Stop`, as a block with the note as its reason,
so the agent reads it and goes on); note_delivery.py says what each prints. Each note changes
state once from `queued`: to `delivered` (where, when), `cancelled` (by the user, while queued)
or `dropped` (the session ended first; why is kept). Nothing is delivered to a session that
ended: a `SessionEnd` drops what waits, and a note for an ended session is refused.

Memory only: a server restart drops the queue (docs/api.md, "Notes to the agent"). The text
is redacted when the note is made, so nothing that leaves the server (the listing, the
timeline, the agent) carries a secret the redactor knows.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from sidemirror.core.clock import iso_from_epoch
from sidemirror.core.redact import redact_text

NoteState = Literal["queued", "delivered", "cancelled", "dropped"]
NOTE_CHARS = 20_000
QUEUED_PER_SESSION = 20
KEPT = 500  # notes remembered in all (settled ones go first), for listings and late replies


class NotQueued(Exception):
    """The note is no longer queued (its state says what happened)."""

    def __init__(self, note: Note) -> None:
        super().__init__(note.id)
        self.note = note


class QueueFull(Exception):
    pass


@dataclass(eq=False)
class Note:
    id: str
    workspace: str
    session: str
    text: str  # redacted
    kind: Literal["note", "review"]
    created_at: float
    state: NoteState = "queued"
    settled_at: float | None = None
    where: str | None = None  # delivered: the hook event that carried it
    why: str | None = None  # dropped: the reason

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace": self.workspace,
            "session": self.session,
            "kind": self.kind,
            "text": self.text,
            "state": self.state,
            "created_at": iso_from_epoch(self.created_at),
            "settled_at": iso_from_epoch(self.settled_at) if self.settled_at else None,
            "where": self.where,
            "why": self.why,
        }


class Notes:
    def __init__(self) -> None:
        self.notes: OrderedDict[str, Note] = OrderedDict()

    def add(
        self, workspace: str, session: str, text: str, kind: Literal["note", "review"] = "note"
    ) -> Note:
        if len(self.queued(workspace, session)) >= QUEUED_PER_SESSION:
            raise QueueFull
        note = Note(
            secrets.token_urlsafe(12),
            workspace,
            session,
            redact_text(text[:NOTE_CHARS]),
            kind,
            time.time(),
        )
        self.notes[note.id] = note
        self._bound()
        return note

    def get(self, note_id: str) -> Note:
        return self.notes[note_id]  # KeyError: never issued (or long forgotten)

    def cancel(self, note_id: str) -> Note:
        note = self.get(note_id)
        if note.state != "queued":
            raise NotQueued(note)
        note.state, note.settled_at = "cancelled", time.time()
        return note

    def take(self, workspace: str, session: str, where: str) -> list[Note]:
        """Every queued note of the session, now delivered by the hook event `where`."""
        return self._settle(workspace, session, "delivered", where=where)

    def drop(self, workspace: str, session: str, why: str) -> list[Note]:
        return self._settle(workspace, session, "dropped", why=why)

    def _settle(self, workspace: str, session: str, state: NoteState, **why: str) -> list[Note]:
        settled = self.queued(workspace, session)
        now = time.time()
        for note in settled:
            note.state, note.settled_at = state, now
            note.where, note.why = why.get("where"), why.get("why")
        return settled

    def queued(self, workspace: str, session: str) -> list[Note]:
        return [
            n
            for n in self.notes.values()
            if n.state == "queued" and (n.workspace, n.session) == (workspace, session)
        ]

    def listing(self, workspace: str, session: str) -> list[dict[str, Any]]:
        return [
            n.describe()
            for n in self.notes.values()
            if (n.workspace, n.session) == (workspace, session)
        ]

    def _bound(self) -> None:
        while len(self.notes) > KEPT:
            settled = next((k for k, n in self.notes.items() if n.state != "queued"), None)
            if settled is None:
                return
            del self.notes[settled]
