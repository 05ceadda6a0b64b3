"""One inbox: a session that asks the user (Claude Code's AskUserQuestion, through the real
hook) is listed as waiting for an answer with the question it asks, which the notification
carries; once it moves on, the question is gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.harness.waiting import until
from tests.server.attention.hook_support import event, events, hook_server
from tests.server.support import ClientFactory

QUESTION = "Which registry should the package go to?"


def asking_event() -> dict[str, Any]:
    """A PreToolUse of AskUserQuestion, its input as Claude Code's tool takes it."""
    asking, _ = events("ask-user-question.jsonl")  # then the PermissionRequest
    assert asking["hook_event_name"] == "PreToolUse"
    return asking


async def test_a_question_is_in_the_inbox_while_it_waits(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    assert await server.hook(asking_event()) == (0, "")
    row = await server.session_row()
    assert row is not None
    assert (row["state"], row["reason"], row["exact"]) == ("waiting", "input", True)
    assert row["question"] == f"{QUESTION} (and 1 more)"

    assert await server.hook(event("PostToolUse", "after-the-decision.jsonl")) == (0, "")

    async def moved_on() -> bool:
        now = await server.session_row()
        return now is not None and now["state"] == "running" and now["question"] is None

    await until(moved_on, what="the session running again, no question listed")
