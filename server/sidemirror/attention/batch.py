""" "Allow all N waiting in this session": several held requests of one session allowed at once.

The panel lists each request (its command, its file) on the batch card and sends the ids it
listed, not "whatever waits": a request that arrived after the user looked is not in the batch.
Each id is settled through `Decisions.answer`, so each still changes state once; one that
closed meanwhile (answered in the terminal, timed out, allowed from its own card) is reported
with how it ended and is not answered again. A card whose input could not be shown whole is
never allowed, here as on its own.
"""

from __future__ import annotations

from typing import Any

from sidemirror.attention.decisions import AlreadyAnswered, Answer, Decisions, outcome

MAX_BATCH = 64


def allow_all(
    decisions: Decisions, workspace: str, session: str, ids: list[str]
) -> list[dict[str, Any]]:
    """One result per id, in the order sent: `allowed`, `already_answered` (with `outcome`),
    `unknown`, `other_session` or `input_not_shown`."""
    results: list[dict[str, Any]] = []
    for request_id in dict.fromkeys(ids):  # an id listed twice is answered once
        try:
            held = decisions.get(request_id)
        except AlreadyAnswered as exc:
            word = outcome(exc.answer)
            results.append({"id": request_id, "result": "already_answered", "outcome": word})
            continue
        except KeyError:
            results.append({"id": request_id, "result": "unknown"})
            continue
        if (held.workspace, held.session) != (workspace, session):
            results.append({"id": request_id, "result": "other_session"})
        elif not held.card.whole:
            results.append({"id": request_id, "result": "input_not_shown"})
        else:
            decisions.answer(request_id, Answer("allow", "panel"))
            results.append({"id": request_id, "result": "allowed"})
    return results
