"""Decisions on held permission requests (attention/decisions.py).

- `GET /api/decisions`: the pending requests, oldest first, each with its tool, its (redacted)
  input, and its `card`: the whole input as the panel shows it (attention/card_input.py);
  `settled`: the last requests settled, with their `outcome`.
- `POST /api/decisions/{request_id}` `{"behavior": "allow"|"deny", "message", "rule"}`: answer
  one; `rule` (with allow) is the index of one of the card's `rules`, the agent's own suggested
  permission update, which it then applies ("Always allow", attention/rules.py).
- `POST /api/decisions/batch`: allow several of one session at once (web/decision_batch.py).
- `POST /api/decisions/{request_id}/reveal`: the values masked on that request's card.

Both POSTs are `@panel`: they need the token and the panel credential, which only the paired
extension holds (panel_credential.py), so a process with the runtime-file token, whatever
Origin it sends, can neither approve what the agent runs nor read what the card masks. An id
that is not pending is refused: 404 never issued, 409 `already_answered` with the real
`outcome` (a late or replayed decision changes nothing). Allow on a card whose input could not
be shown whole is 409 `input_not_shown`: only Deny can answer it.
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.decisions import AlreadyAnswered, Answer, Pending, outcome
from sidemirror.attention.questions import ASKING_TOOL
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import panel

MESSAGE_CHARS = 2000


async def list_decisions(request: web.Request) -> web.Response:
    attention = request.app[ATTENTION]
    decisions = attention.decisions
    rows = decisions.listing()
    for row in rows:  # a question the panel can answer (web/answers.py), else the terminal
        if row["tool_name"] == ASKING_TOOL:
            row["answerable"] = attention.questions.get(row["id"]) is not None
    return web.json_response({"decisions": rows, "settled": decisions.settled()})


def _refused(exc: Exception) -> web.Response:
    if isinstance(exc, AlreadyAnswered):
        word = outcome(exc.answer)
        return web.json_response(
            {
                "error": {
                    "code": "already_answered",
                    "message": f"this request was already settled: {word}",
                    "outcome": word,
                }
            },
            status=409,
        )
    return error_response(404, "unknown_request", "no pending request has this id")


@panel
async def decide(request: web.Request) -> web.Response:
    # The middleware has checked the token and the panel credential.
    body = await read_json(request)
    behavior = body.get("behavior") if isinstance(body, dict) else None
    if behavior not in ("allow", "deny"):
        return error_response(400, "bad_decision", 'behavior must be "allow" or "deny"')
    message = body.get("message") or ""
    if not isinstance(message, str):
        return error_response(400, "bad_decision", "message must be a string")
    rule = body.get("rule")
    if rule is not None and (behavior != "allow" or type(rule) is not int):
        return error_response(400, "bad_decision", "rule is the index of a rule, with allow")
    decisions = request.app[ATTENTION].decisions
    request_id = request.match_info["request_id"]
    try:
        held = decisions.get(request_id)
        if behavior == "allow" and not held.card.whole:
            return error_response(
                409, "input_not_shown", "the input could not be shown whole: only Deny answers it"
            )
        if rule is not None and not 0 <= rule < len(held.suggestions):
            return error_response(400, "unknown_rule", "the agent suggested no rule at this index")
        applied = (held.suggestions[rule],) if rule is not None else ()
        pending: Pending = decisions.answer(
            request_id, Answer(behavior, "panel", message[:MESSAGE_CHARS], permissions=applied)
        )
    except (AlreadyAnswered, KeyError) as exc:
        return _refused(exc)
    return web.json_response({"id": pending.id, "behavior": behavior})


@panel
async def reveal(request: web.Request) -> web.Response:
    """The masked values of one pending card, `{"values": {mask id: value}}`. Sent to the
    panel only; never stored or logged (the access log has no bodies)."""
    try:
        pending = request.app[ATTENTION].decisions.get(request.match_info["request_id"])
    except (AlreadyAnswered, KeyError) as exc:
        return _refused(exc)
    response = web.json_response({"values": dict(pending.card.hidden)})
    response.headers["Cache-Control"] = "no-store"
    return response
