"""claude-agent-acp's recorded traffic (v1 and v2 envelopes) → items: compaction, modes, tool
progress, whole v2 messages, and the same session read through both protocol versions."""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.models import SystemEvent, ToolProgressEvent, ToolResultEvent, ToolUseEvent
from sidemirror.sources.acp.converter import AcpConverter
from sidemirror.sources.base import Emitted

from tests.harness.paths import FIXTURES

ACP = FIXTURES / "acp"


def run(name: str) -> tuple[AcpConverter, list[Emitted]]:
    conv = AcpConverter("default")
    out: list[Emitted] = []
    for line in (ACP / name).read_text().splitlines():
        out += conv.convert(json.loads(line))
    return conv, out + conv.finish()


def stored(out: list[Emitted]) -> list[Any]:
    return [
        e.item
        for e in out
        if e.item is not None and not e.item.type.endswith(("_delta", "_progress"))
    ]


def test_a_replayed_session_reads_the_same_through_v1_and_v2() -> None:
    _, v1 = run("v1-zed-session-load-replay.jsonl")
    _, v2 = run("session-load-replay.jsonl")

    def view(out: list[Emitted]) -> list[tuple[str, str]]:
        return [
            (i.type, getattr(i, "content", None) or getattr(i, "output", "") or i.input)
            for i in stored(out)
        ]

    assert view(v1) == view(v2)
    assert view(v2) == [
        ("user", "Fix the bug"),
        ("thinking", "Check the file."),
        ("assistant", "I will edit it."),
        ("tool_use", "ls"),
        ("tool_result", "app.ts"),  # zed's `_meta.terminal_output`; v2's base64 terminal_update
        ("tool_use", "Edit src/app.ts"),
        ("tool_result", "The file <cwd>/src/app.ts has been updated successfully."),
        ("tool_use", "Explore"),
        ("tool_result", "Report."),
        ("assistant", "Fixed."),
    ]


def test_compaction_shows_its_summary_in_both_versions() -> None:
    for name in ("compaction-update.jsonl", "v1-zed-compaction-update.jsonl"):
        conv, out = run(name)
        compact = [i for i in stored(out) if isinstance(i, SystemEvent)]
        assert [(c.subtype, c.content) for c in compact] == [("compact", "The summary.")], name
        assert conv.run_status == "ok"


def test_tool_progress_goes_out_live_and_is_not_the_output() -> None:
    _, out = run("tool-progress.jsonl")
    progress = [e.item for e in out if isinstance(e.item, ToolProgressEvent)]
    assert [(p.tool_use_id, p.elapsed_ms) for p in progress] == [
        ("toolu_slow", 1000),
        ("toolu_slow", 2000),
        ("toolu_slow", 3000),
    ]
    result = next(i for i in stored(out) if isinstance(i, ToolResultEvent))
    assert result.output == "built"
    turn = stored(out)[-1]
    assert (turn.context_tokens, turn.context_window) == (2, 200000)


def test_a_mode_option_that_did_not_change_shows_no_line() -> None:
    conv, out = run("exit-plan-approve.jsonl")
    items = stored(out)
    assert not [i for i in items if isinstance(i, SystemEvent)]
    use = next(i for i in items if isinstance(i, ToolUseEvent))
    assert (use.name, use.kind) == ("ExitPlanMode", "plan")
    assert [e.state for e in out if e.state] == ["running", "waiting", "waiting", "running", "idle"]
