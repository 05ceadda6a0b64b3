"""A decision as a `system` item (`subtype: "decision"`) in its session: what was asked, what
was answered, by whom, when. Written through the store's one write path, so every client of the
session sees it in place."""

from __future__ import annotations

import json
from typing import Any

from sidemirror.attention.decisions import Answer, Pending
from sidemirror.attention.questions import answers_text
from sidemirror.attention.rules import describe
from sidemirror.core.clock import iso_from_epoch
from sidemirror.core.models import SystemEvent
from sidemirror.core.store import SessionUpdate, Store

SUMMARY_CHARS = 200
_OUTCOMES = {
    ("allow", "panel"): "allowed from the side panel",
    ("deny", "panel"): "denied from the side panel",
    (None, "timeout"): "no decision from the panel in time: asked in the terminal",
    (None, "terminal"): "answered in the terminal",
    (None, "gone"): "the hook stopped waiting (the agent moved on)",
}


def summary(tool_name: str, tool_input: Any) -> str:
    """One line for the request: the command, the file, the URL, else the input as JSON."""
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "notebook_path", "url", "path", "pattern", "query"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return f"{tool_name}: {value[:SUMMARY_CHARS]}"
    text = json.dumps(tool_input, ensure_ascii=False)
    return f"{tool_name}: {text[:SUMMARY_CHARS]}"


def decision_text(request: Pending, answer: Answer) -> str:
    outcome = _OUTCOMES.get((answer.behavior, answer.by), f"{answer.behavior} ({answer.by})")
    if answer.updated_input is not None:
        outcome = "answered from the side panel"
    lines = [
        f"Permission asked: {summary(request.tool_name, request.tool_input)}",
        f"Answer: {outcome} at {iso_from_epoch(answer.at)}",
    ]
    if answer.message:
        lines.append(f"Message to the agent: {answer.message}")
    for rule in answer.permissions:
        lines.append(f"Rule applied: {describe(rule)}")
    if answer.updated_input is not None:
        lines.append(f"Answers:\n{answers_text(answer.updated_input.get('answers') or {})}")
    return "\n".join(lines)


async def record(store: Store, request: Pending, answer: Answer) -> bool:
    """Append the decision to its session; False when the session is not known (yet)."""
    ws = store.workspace(request.workspace)
    log = ws.sessions.get(request.session) if ws is not None else None
    if log is None:
        return False
    await store.load(log)  # an item appended before the first read would precede its history
    item = SystemEvent(
        subtype="decision",
        content=decision_text(request, answer),
        ts=iso_from_epoch(answer.at) or "",
    )
    store.write(log, SessionUpdate(items=[item]))
    return True
