"""Notes and reviews to the agent (attention/notes.py).

- `GET /api/notes?workspace=W&session=S`: `{"notes": [...]}`, the session's notes, oldest first,
  each with its `state` (queued, delivered, cancelled, dropped), `where` / `why`.
- `POST /api/notes` `{"workspace","session","text"}` or `{"workspace","session","review":
  {"comments": [{"path","line","end_line","quote","comment"}]}}`: queue a note (a review is
  one note, attention/review_note.py); 201 `{"note"}`.
- `POST /api/notes/{note_id}/cancel`: cancel a queued note.

Both POSTs are `@panel`, like a decision: only the paired extension talks to the agent. A note
for a session that ended is refused (409 `session_ended`: nothing would read it); one for a
session the server does not know is 404. Cancelling a note that is no longer queued is 409
`not_queued` with its `state` (a replay changes nothing).
"""

from __future__ import annotations

from typing import Literal

from aiohttp import web

from sidemirror.attention.note_item import record_note
from sidemirror.attention.notes import NotQueued, QueueFull
from sidemirror.attention.review_note import BadReview, review_text
from sidemirror.attention.service import Attention
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import panel
from sidemirror.web.state import APP_STATE


async def list_notes(request: web.Request) -> web.Response:
    workspace = request.query.get("workspace", "")
    session = request.query.get("session", "")
    notes = request.app[ATTENTION].notes
    return web.json_response({"notes": notes.listing(workspace, session)})


def _ended(attention: Attention, workspace: str, session: str, log_state: str) -> bool:
    tracked = attention.board.tracked.get((workspace, session))
    hook_ended = tracked is not None and tracked.hook is not None and tracked.hook.state == "ended"
    return hook_ended or log_state == "ended"


@panel
async def add_note(request: web.Request) -> web.Response:
    body = await read_json(request)
    if not isinstance(body, dict):
        return error_response(400, "bad_note", "a note is a JSON object")
    workspace, session = body.get("workspace"), body.get("session")
    if not isinstance(workspace, str) or not isinstance(session, str):
        return error_response(400, "bad_note", "a note names its workspace and session")
    kind: Literal["note", "review"] = "note"
    if "review" in body:
        review = body["review"]
        try:
            text = review_text(review.get("comments") if isinstance(review, dict) else None)
        except BadReview as exc:
            return error_response(400, "bad_review", str(exc))
        kind = "review"
    else:
        typed = body.get("text")
        if not isinstance(typed, str) or not typed.strip():
            return error_response(400, "bad_note", "a note needs its text")
        text = typed.strip()
    store = request.app[APP_STATE].store
    ws = store.workspace(workspace)
    log = ws.sessions.get(session) if ws is not None else None
    if log is None:
        return error_response(404, "unknown_session", "no session has this id")
    attention = request.app[ATTENTION]
    if _ended(attention, workspace, session, log.state):
        return error_response(
            409, "session_ended", "this session has ended: no agent is there to read the note"
        )
    try:
        note = attention.notes.add(workspace, session, text, kind)
    except QueueFull:
        return error_response(409, "queue_full", "too many notes wait for this session")
    await record_note(store, note)
    return web.json_response({"note": note.describe()}, status=201)


@panel
async def cancel_note(request: web.Request) -> web.Response:
    attention = request.app[ATTENTION]
    try:
        note = attention.notes.cancel(request.match_info["note_id"])
    except KeyError:
        return error_response(404, "unknown_note", "no note has this id")
    except NotQueued as exc:
        return web.json_response(
            {
                "error": {
                    "code": "not_queued",
                    "message": f"this note is no longer queued: {exc.note.state}",
                    "state": exc.note.state,
                }
            },
            status=409,
        )
    await record_note(request.app[APP_STATE].store, note)
    return web.json_response({"note": note.describe()})
