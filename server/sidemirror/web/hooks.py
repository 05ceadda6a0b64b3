"""`POST /api/hooks/claude`: a Claude Code hook event, sent by `sidemirror hook` (token);
`POST /api/hooks/codex`: a Codex hook event, sent by `sidemirror hook --agent codex`.

Codex's events carry the same common fields (`session_id`, `cwd`, `hook_event_name`) and its
PermissionRequest takes the same decision output (Codex hooks documentation), so both agents
go through one path; the pending request and the session remember which agent asked.

Every event updates its session's state (attention/board.py). A `PermissionRequest` is held
open until the panel decides (web/decisions.py), the transcript moves on, or
`--decision-timeout` passes; the answer's `output` is what the hook prints: Claude Code's
documented PermissionRequest decision, or null (no decision: the terminal asks as usual).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from sidemirror.attention.asking import question_of
from sidemirror.attention.board import Tracked
from sidemirror.attention.card_input import build_card
from sidemirror.attention.decision_item import record
from sidemirror.attention.decisions import Answer
from sidemirror.attention.hook_events import HookEvent, StateSignal, parse_event, signal_of
from sidemirror.attention.note_item import carry_notes
from sidemirror.attention.questions import answerable
from sidemirror.attention.rules import suggestions_of
from sidemirror.attention.service import Attention
from sidemirror.core.redact import redact_json
from sidemirror.core.typed import hide_typed_values
from sidemirror.web.bodies import error_response, read_json
from sidemirror.web.state import APP_STATE

ATTENTION = web.AppKey("attention", Attention)


def hook_output(answer: Answer) -> dict[str, Any] | None:
    """Claude Code's PermissionRequest decision output (hooks reference, "PermissionRequest
    decision control"); None when nobody decided."""
    if answer.behavior is None:
        return None
    decision: dict[str, Any] = {"behavior": answer.behavior}
    if answer.behavior == "deny" and answer.message:
        decision["message"] = answer.message
    if answer.behavior == "allow" and answer.permissions:  # "Always allow": the agent's rule
        decision["updatedPermissions"] = list(answer.permissions)
    if answer.behavior == "allow" and answer.updated_input is not None:
        decision["updatedInput"] = answer.updated_input  # a question's answers
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


async def claude_hook(request: web.Request) -> web.Response:
    return await _receive(request, "claude")


async def codex_hook(request: web.Request) -> web.Response:
    return await _receive(request, "codex")


async def _receive(request: web.Request, agent: str) -> web.Response:
    try:
        event = parse_event(await read_json(request))
    except ValueError as exc:
        return error_response(400, "bad_hook_event", str(exc))
    return web.json_response({"output": await answer_event(request.app, event, agent)})


async def answer_event(
    app: web.Application, event: HookEvent, agent: str = "claude"
) -> dict[str, Any] | None:
    """What the agent gets for `event`: the command hook prints it, an HTTP hook's answer is it
    (web/hook_http.py). None: nothing to say."""
    attention = app[ATTENTION]
    asked = question_of(event.name, event.payload)
    tracked = attention.board.hook(event.cwd, event.session_id, signal_of(event), agent, asked)
    output = None
    if event.name == "PermissionRequest":
        output = await _hold(app, attention, tracked, event, agent)
    else:  # a PostToolUse or Stop carries the session's queued notes (attention/notes.py)
        output = await carry_notes(
            app[APP_STATE].store, attention.notes, tracked.workspace, tracked.session, event
        )
    return output


async def _hold(
    app: web.Application, attention: Attention, tracked: Tracked, event: HookEvent, agent: str
) -> dict[str, Any] | None:
    tool_name = str(event.payload.get("tool_name") or "")
    raw_input = event.payload.get("tool_input")
    try:
        tool_input = hide_typed_values(tool_name, redact_json(raw_input))
    except ValueError:
        tool_input = "[input nested too deeply to show]"
    decisions = attention.decisions
    pending = decisions.open(
        tracked.workspace,
        tracked.session,
        tool_name,
        tool_input,
        build_card(raw_input, tool_name),
        attention.decision_timeout_s,
        agent=agent,
        suggestions=suggestions_of(event.payload),
    )
    if answerable(raw_input, tool_name):  # the panel may answer it (web/answers.py)
        attention.questions.hold(pending.id, raw_input, set(decisions.pending))
    attention.board.announce(tracked)  # even if it already waited (a Notification came first)
    store = app[APP_STATE].store
    try:
        # Settled once by decisions.py: the panel, its timer, or the transcript moving on.
        answer = await asyncio.shield(pending.future)
    except asyncio.CancelledError:  # the hook was stopped (Claude Code's own timeout, ^C)
        answer = decisions.give_up(pending)
        await record(store, pending, answer)
        attention.board.announce(tracked)
        raise
    await record(store, pending, answer)
    if answer.behavior is not None:  # the tool runs (or is refused) now: the agent works on
        attention.board.set_hook_state(tracked, StateSignal("running"))
    attention.board.announce(tracked)
    return hook_output(answer)
