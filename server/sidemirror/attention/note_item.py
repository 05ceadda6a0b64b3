"""A note's life in its session's timeline, and its delivery by a hook event.

Each state change of a note (notes.py) is a `system` item (`subtype: "note"`) of its session,
written through the store's one write path: queued (with the whole text), then delivered (by
which hook event, when), cancelled, or dropped (why). The panel shows them as the user's items.
"""

from __future__ import annotations

from typing import Any

from sidemirror.attention.hook_events import HookEvent
from sidemirror.attention.note_delivery import CARRIERS, hook_output, in_subagent
from sidemirror.attention.notes import Note, Notes
from sidemirror.core.clock import iso_from_epoch
from sidemirror.core.models import SystemEvent
from sidemirror.core.store import SessionUpdate, Store

SUBTYPE = "note"


def note_item_text(note: Note) -> str:
    label = "Review" if note.kind == "review" else "Note"
    when = iso_from_epoch(note.settled_at or note.created_at)
    if note.state == "queued":
        return f"{label} to the agent, queued at {when} [{note.id}]\n\n{note.text}"
    if note.state == "delivered":
        where = CARRIERS.get(note.where or "", note.where)
        return f"{label} delivered {where} ({note.where}) at {when} [{note.id}]"
    if note.state == "cancelled":
        return f"{label} cancelled at {when}, before delivery [{note.id}]"
    return f"{label} not delivered: {note.why} ({when}) [{note.id}]"


async def record_note(store: Store, note: Note) -> bool:
    """Append the note's present state to its session; False when the session is not known."""
    ws = store.workspace(note.workspace)
    log = ws.sessions.get(note.session) if ws is not None else None
    if log is None:
        return False
    await store.load(log)  # an item appended before the first read would precede its history
    when = iso_from_epoch(note.settled_at or note.created_at) or ""
    item = SystemEvent(subtype=SUBTYPE, content=note_item_text(note), ts=when)
    store.write(log, SessionUpdate(items=[item]))
    return True


async def carry_notes(
    store: Store, notes: Notes, workspace: str, session: str, event: HookEvent
) -> dict[str, Any] | None:
    """What the hook of `event` prints to deliver the session's queued notes (None: it carries
    none); a `SessionEnd` drops them instead. Each change is recorded."""
    event_name = event.name
    if event_name == "SessionEnd":
        for note in notes.drop(workspace, session, "the session ended before it could be read"):
            await record_note(store, note)
        return None
    if event_name not in CARRIERS or in_subagent(event.payload):
        return None
    taken = notes.take(workspace, session, event_name)
    if not taken:
        return None
    for note in taken:
        await record_note(store, note)
    return hook_output(event_name, taken)
