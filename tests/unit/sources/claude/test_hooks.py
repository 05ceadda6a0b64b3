"""Hook feedback in Claude Code transcripts: small `system`/`hook` lines, only when a hook said
something. A recorded 2.1.38 transcript (its Stop hooks ran without error) shows none; the
attachment records are in the shape Claude Code 2.1 writes (`type: attachment`, see
tests/fixtures/NOTICE.md)."""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.models import SystemEvent
from sidemirror.sources.claude.parser import ClaudeParser

from tests.unit.sources.claude.test_branches import TOOL_HEAVY
from tests.unit.sources.claude.test_parser import parse_session


def system_lines(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    parser = ClaudeParser()
    items = [i for r in records for i in parser.feed(r)]
    return [(i.subtype, i.content) for i in items if isinstance(i, SystemEvent)]


def attachment(**fields: Any) -> dict[str, Any]:
    return {"type": "attachment", "timestamp": "2026-06-02T10:00:00Z", "attachment": fields}


def test_a_recorded_session_shows_no_hook_noise_and_no_unknown_records() -> None:
    subtypes = {i.subtype for i in parse_session(TOOL_HEAVY) if isinstance(i, SystemEvent)}
    assert "unknown" not in subtypes and "hook" not in subtypes


def test_hooks_that_said_something_are_shown_and_silent_ones_are_not() -> None:
    records = [
        attachment(type="hook_success", hookName="SessionStart:startup", content=""),
        attachment(type="skill_listing", content="12 skills"),  # context, not an event
        attachment(
            type="hook_blocking_error",
            hookName="PreToolUse:Bash",
            blockingError={"blockingError": "rm -rf is not allowed", "command": "guard.sh"},
        ),
        attachment(
            type="hook_additional_context",
            hookName="PostToolUse:Edit",
            content=["[COMPILE ERROR] lib/a.ex:18"],
        ),
        attachment(
            type="hook_non_blocking_error",
            hookName="Stop",
            stderr="lint.sh: not found",
            exitCode=127,
        ),
    ]
    assert system_lines(records) == [
        ("hook", "PreToolUse:Bash: blocked\nrm -rf is not allowed"),
        ("hook", "PostToolUse:Edit: added context\n[COMPILE ERROR] lib/a.ex:18"),
        ("hook", "Stop: failed (exit 127)\nlint.sh: not found"),
    ]


def test_a_stop_summary_is_shown_only_when_a_hook_failed_or_stopped_the_agent() -> None:
    recorded = json.loads(
        '{"type":"system","subtype":"stop_hook_summary","hookCount":3,"hookInfos":[],'
        '"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":true,'
        '"level":"suggestion","timestamp":"2026-02-11T20:40:00.000Z"}'
    )  # as recorded by Claude Code 2.1.39 (marot/spotter transcripts)
    stopped = recorded | {"preventedContinuation": True, "stopReason": "tests are failing"}
    assert system_lines([recorded]) == []
    assert system_lines([stopped]) == [
        ("hook", "Stop hooks (3): stopped the agent\ntests are failing")
    ]


def test_hook_output_is_redacted() -> None:
    secret = "ghp_" + "a" * 36
    lines = system_lines(
        [attachment(type="hook_success", hookName="PostToolUse:Bash", content=f"token {secret}")]
    )
    assert lines and secret not in lines[0][1]
