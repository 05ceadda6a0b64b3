"""Every free-text field of a session item, and every workspace and session field, is
redacted whoever sets it (core/redact_fields.py, core/store.py)."""

from __future__ import annotations

from sidemirror.core.hub import Hub
from sidemirror.core.models import (
    AssistantDeltaEvent,
    PlanEntry,
    PlanEvent,
    SystemEvent,
    ToolResultEvent,
    ToolUseEvent,
    TurnCompleteEvent,
)
from sidemirror.core.projection import Projector
from sidemirror.core.redact_fields import redact_item_fields
from sidemirror.core.store import SessionUpdate, Store, resolve_workspace, workspace_id_for

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def test_every_free_text_field_of_an_item_is_redacted() -> None:
    items = [
        ToolUseEvent(
            tool_use_id=f"id {AWS}",
            name=f"n {AWS}",
            input="kept",
            ts=f"t {AWS}",
            parent_tool_use_id=f"p {AWS}",
        ),  # fmt: skip
        ToolResultEvent(tool_use_id=f"id {AWS}", name=f"n {AWS}", output="x"),
        TurnCompleteEvent(turn=1, model=f"model {AWS}"),
        SystemEvent(subtype=f"s {AWS}", content="x"),
        AssistantDeltaEvent(segment_id=f"seg {AWS}", text="partial"),
        PlanEvent(entries=[PlanEntry(content=f"c {AWS}", status=f"s {AWS}", priority=AWS)]),
    ]
    for item in items:
        redact_item_fields(item)
        assert AWS not in item.model_dump_json(), item


def test_the_adapter_redacted_text_is_not_redacted_again() -> None:
    item = ToolUseEvent(tool_use_id="t", name="Bash", input=f"left as the adapter made it {AWS}")
    redact_item_fields(item)
    assert AWS in item.input  # adapters own their text field (and its cost)


# --- store fields, whoever sets them ---


def test_workspace_and_session_fields_are_redacted_whoever_sets_them() -> None:
    store = Store(Hub(4), Projector())
    directory = f"/home/dev/{AWS}/proj"
    ws = store.ensure_workspace(directory, "claude")
    assert AWS not in ws.directory + ws.name
    assert ws.id == workspace_id_for(directory) == resolve_workspace(ws.directory).id
    assert resolve_workspace(directory).directory == ws.directory
    ws.branch = f"feature/{AWS}"  # sources set it directly
    log = store.ensure_session(ws, f"sess {AWS}", "claude", "e")
    log.title = f"title {AWS}"
    store.write(log, SessionUpdate(items=[TurnCompleteEvent(turn=1, model=AWS)], title=AWS))
    shown = repr((ws.branch, log.session_id, log.title, list(ws.sessions), log.items[0]))
    assert AWS not in shown and "[REDACTED:aws_access_key]" in shown


def test_a_codex_patch_summary_is_redacted_before_it_is_cut() -> None:
    from sidemirror.sources.codex.tools import summary

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    patch = "x" * 190 + " " + token  # no file headers: the summary is the patch's head
    assert token[:8] not in summary("apply_patch", patch)
