"""`POST /api/decisions/{request_id}/answer` `{"answers": {question text: answer}}`: answer a
held `AskUserQuestion` from the panel (attention/questions.py).

`@panel`, like a decision: only the paired extension answers. The request settles once, as
`allow` with the tool's input plus the answers as `updatedInput`, which the waiting hook prints
(web/hooks.py). 404 for an id never issued, 409 `already_answered` (with the real `outcome`) for
one settled before, 409 `not_a_question` for a request that is not a question the panel can
answer (the card says "answer in the terminal"), 400 `bad_answer` when the answers do not fit
the questions (every question answered, with a non-empty string, nothing else).
"""

from __future__ import annotations

from aiohttp import web

from sidemirror.attention.decisions import AlreadyAnswered, Answer
from sidemirror.attention.questions import BadAnswer, updated_input
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.decisions import _refused
from sidemirror.web.hooks import ATTENTION
from sidemirror.web.security import panel


@panel
async def answer_question(request: web.Request) -> web.Response:
    body = await read_json(request)
    answers = body.get("answers") if isinstance(body, dict) else None
    attention = request.app[ATTENTION]
    request_id = request.match_info["request_id"]
    try:
        attention.decisions.get(request_id)  # pending, else 404 / 409 with its outcome
        asked = attention.questions.get(request_id)
        if asked is None:
            return error_response(
                409, "not_a_question", "this request is not a question the panel can answer"
            )
        new_input = updated_input(asked, answers)
        attention.decisions.answer(request_id, Answer("allow", "panel", updated_input=new_input))
    except BadAnswer as exc:
        return error_response(400, "bad_answer", str(exc))
    except (AlreadyAnswered, KeyError) as exc:
        return _refused(exc)
    attention.questions.forget(request_id)
    return web.json_response({"id": request_id, "behavior": "allow", "answered": True})
