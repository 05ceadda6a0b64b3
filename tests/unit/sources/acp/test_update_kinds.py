"""Every `session/update` kind of the ACP schema maps to an item or a documented "not shown".

The kinds are those of the published schema (tests/fixtures/acp/schema-session-update-kinds.json,
taken from agentclientprotocol/agent-client-protocol); the scenarios are records built in the
schema's exact shapes where no recording exists (tests/fixtures/NOTICE.md says which).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sidemirror.core.models import (
    ErrorEvent,
    PlanEvent,
    SystemEvent,
    ThinkingDeltaEvent,
    ToolResultEvent,
    TurnCompleteEvent,
    UserEvent,
)
from sidemirror.sources.acp.converter import HANDLERS, AcpConverter
from sidemirror.sources.acp.updates import UPDATE_KINDS
from sidemirror.sources.base import Emitted

from tests.harness.paths import FIXTURES

ACP = FIXTURES / "acp"
SCHEMA_KINDS: dict[str, list[str]] = json.loads(
    (ACP / "schema-session-update-kinds.json").read_text()
)
ALL_SCHEMA_KINDS = sorted({k for kinds in SCHEMA_KINDS.values() for k in kinds})
# Not in the schema: what Multica, a widely used ACP client, stores in its sessions.
CLIENT_KINDS = ["error_message", "askuserquestion_response"]


def run(records: list[dict[str, Any]]) -> tuple[AcpConverter, list[Emitted]]:
    conv = AcpConverter("default")
    out: list[Emitted] = []
    for record in records:
        out += conv.convert(record)
    return conv, out + conv.finish()


def fixture(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (ACP / name).read_text().splitlines() if line.strip()]


def items_of(out: list[Emitted]) -> list[Any]:
    return [e.item for e in out if e.item is not None]


def test_the_table_and_the_handlers_name_the_same_kinds() -> None:
    assert set(HANDLERS) == set(UPDATE_KINDS)
    assert set(ALL_SCHEMA_KINDS) <= set(UPDATE_KINDS)
    assert set(CLIENT_KINDS) <= set(UPDATE_KINDS)
    assert len(ALL_SCHEMA_KINDS) == 23  # v1, its unstable additions and the v2 draft


@pytest.mark.parametrize("kind", ALL_SCHEMA_KINDS + CLIENT_KINDS)
def test_no_kind_the_schema_defines_is_unknown(kind: str) -> None:
    update = {
        "sessionUpdate": kind,
        "content": {"type": "text", "text": "x"},
        "toolCallId": "t1",
        "terminalId": "t1",
        "data": "eA==",
        "title": "A title",
        "severity": "info",
        "compactionId": "c1",
        "status": "completed",
        "message": "It broke",
        "entries": [],
    }
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "go"}]}
    _, out = run(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt},
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": update},
            },
        ]
    )
    unknown = [i for i in items_of(out) if isinstance(i, SystemEvent) and i.subtype == "unknown"]
    assert unknown == []


def test_a_kind_reserved_for_the_future_shows_generically() -> None:
    update = {"sessionUpdate": "_vendor_progress", "x": 1}
    _, out = run([{"jsonrpc": "2.0", "method": "session/update", "params": {"update": update}}])
    (item,) = items_of(out)
    assert isinstance(item, SystemEvent) and item.subtype == "unknown"
    assert "_vendor_progress" in item.content


def test_every_kind_in_one_session_built_from_the_schema() -> None:
    conv, out = run(fixture("schema-kinds.jsonl"))
    items = items_of(out)
    stored = [i for i in items if not i.type.endswith(("_delta", "_progress"))]
    assert [i.type for i in stored] == [
        "user",
        "thinking",
        "assistant",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "plan",
        "system",  # notice
        "system",  # mode
        "plan",  # removed
        "system",  # compaction
        "turn_complete",
        "user",
        "assistant",
        "turn_complete",
    ]
    prompt = stored[0]
    assert isinstance(prompt, UserEvent)
    assert prompt.content == "What is wrong in this screenshot?"  # no "[image]" in the words
    assert [(a.media_type, a.size) for a in prompt.attachments] == [("image/png", 70)]
    assert any(isinstance(i, ThinkingDeltaEvent) for i in items)
    results = [i for i in stored if isinstance(i, ToolResultEvent)]
    assert [r.output for r in results] == ["Found 3 configuration files...", "passed\r\n"]
    notice, mode, compact = (i for i in stored if isinstance(i, SystemEvent))
    assert (notice.subtype, notice.content) == (
        "notice",
        "Warning: MCP server unavailable\nContinuing without it.",
    )
    assert (mode.subtype, mode.content) == ("mode", "Mode: Code")
    assert (compact.subtype, compact.content) == (
        "compact",
        "Summary: the login test fails on an assertion.",
    )
    plans = [i for i in stored if isinstance(i, PlanEvent)]
    assert [len(p.entries) for p in plans] == [2, 0]
    first, second = (i for i in stored if isinstance(i, TurnCompleteEvent))
    assert (first.status, first.stop_reason, first.cost_usd) == ("ok", "end_turn", 0.045)
    assert (first.context_tokens, first.context_window) == (53000, 200000)
    assert (second.status, second.stop_reason) == ("stopped", "cancelled")
    assert [e.title for e in out if e.title] == [
        "What is wrong in this screenshot?",
        "Fix the failing login test",  # session_info_update renames it
    ]
    assert conv.run_status == "stopped"
    assert conv.model == "claude-sonnet-4-6"  # from config_option_update


def test_a_clients_stored_session_errors_answers_and_internal_prompts() -> None:
    conv, out = run(fixture("multica-stored.jsonl"))
    items = items_of(out)
    assert [i.type for i in items if not i.type.endswith("_delta")] == [
        "user",
        "tool_use",
        "tool_result",
        "assistant",
        "turn_complete",
        "user",
        "error",
        "turn_complete",
    ]
    users = [i.content for i in items if isinstance(i, UserEvent)]
    assert users == ["Add a login page", "Deploy it"]  # the `_internal` answer stays hidden
    answer = next(i for i in items if isinstance(i, ToolResultEvent))
    assert (answer.name, answer.output) == ("AskUserQuestion", "Which framework? → React")
    error = next(i for i in items if isinstance(i, ErrorEvent))
    assert error.message.startswith("Authentication required.")
    assert "claude /login" in error.message
    turns = [i for i in items if isinstance(i, TurnCompleteEvent)]
    assert [(t.turn, t.status, t.stop_reason) for t in turns] == [
        (1, "stopped", None),  # the next prompt ended it, not the hidden one
        (2, "failed", "auth"),
    ]
    assert conv.run_status == "failed"


def _rpc(method: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params, **extra}


def _prompt(text: str, rpc_id: int, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": "s", "prompt": [{"type": "text", "text": text}], **extra}
    return _rpc("session/prompt", params, id=rpc_id)


def _chunk(text: str) -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return _rpc("session/update", {"sessionId": "s", "update": update})


def test_an_internal_prompt_neither_opens_nor_closes_a_turn() -> None:
    _, out = run(
        [
            _prompt("Build it", 1),
            _chunk("Which framework?"),
            _prompt("React", 2, _internal=True),
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "user_message_chunk",
                        "content": {"type": "text", "text": "React"},
                    },
                },
            },
            _chunk("Using React."),
            {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}},
        ]
    )
    items = [i for i in items_of(out) if not i.type.endswith("_delta")]
    assert [i.type for i in items] == ["user", "assistant", "assistant", "turn_complete"]
    assert [i.turn for i in items if isinstance(i, TurnCompleteEvent)] == [1]


def test_a_failed_prompt_shows_the_error_and_fails_the_turn() -> None:
    error = {"code": -32000, "message": "Authentication required"}
    conv, out = run([_prompt("hi", 7), {"jsonrpc": "2.0", "id": 7, "error": error}])
    items = items_of(out)
    assert [i.type for i in items] == ["user", "error", "turn_complete"]
    assert items[1].message == "Authentication required"
    assert (items[2].status, items[2].stop_reason) == ("failed", "error")
    assert conv.run_status == "failed"


def test_a_response_to_another_request_is_not_a_prompts() -> None:
    records = [
        _rpc("session/set_mode", {"sessionId": "s", "modeId": "code"}, id=4),
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Invalid params"}},
    ]
    conv, out = run(records)
    assert items_of(out) == [] and conv.run_status is None


ODD_VALUES: list[Any] = [None, 7, True, "x", [], {}, [{"type": {}}], {"type": ["image"]}]


@pytest.mark.parametrize("kind", ALL_SCHEMA_KINDS + CLIENT_KINDS)
def test_drifting_field_types_never_raise(kind: str) -> None:
    fields = [
        "content", "toolCallId", "terminalId", "data", "title", "severity", "compactionId",
        "status", "message", "entries", "plan", "configOptions", "currentModeId", "used", "size",
        "cost", "summary", "response", "output", "messageId", "_meta", "stopReason", "usage",
    ]  # fmt: skip
    records = [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {"sessionUpdate": kind, **dict.fromkeys(fields, v)},
            },
        }
        for v in ODD_VALUES
    ]
    run(records)  # no exception: one bad line never stops a session
