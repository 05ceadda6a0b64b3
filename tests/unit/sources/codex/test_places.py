"""Codex rollouts where a channel or an end is missing: nothing is shown twice, nothing is lost.

Built from real recorded lines (tests/fixtures/codex/) with the change said at each: events
dropped (a build that wrote none), a command's output changed to say it is still running, a
reasoning item given two summary parts, a rollout pushed through ingest cut after a prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.models import SessionItem, ToolResultEvent, ToolUseEvent, UserEvent
from sidemirror.sources.codex.commands import STILL_RUNNING
from sidemirror.sources.codex.exec import CodexRolloutConverter
from sidemirror.sources.codex.head import read_head

from tests.unit.sources.codex.test_turn_figures import FIXTURE_CODEMIE, FULL, parse, records

LOCALPUSH = records(FULL)


def copy(record: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(record))


def prompts(items: list[SessionItem | None]) -> list[str]:
    return [i.content for i in items if isinstance(i, UserEvent)]


def test_without_prompt_events_the_user_item_beside_the_model_output_is_the_prompt(
    tmp_path: Path,
) -> None:
    # Changed: the `user_message` event dropped, as a build that persisted none would write it.
    lines = [r for r in LOCALPUSH if r["payload"].get("type") != "user_message"]
    parser, items = parse(lines)
    prompt = LOCALPUSH[8]["payload"]["content"][0]["text"]
    assert prompts([*items]) == [prompt]
    assert [i.type for i in items].count("turn_complete") == 1
    assert parser.first_prompt == prompt
    # The listing reads only the head of the file, its user lines: the same title.
    rollout = tmp_path / FULL.name
    rollout.write_text("".join(json.dumps(r) + "\n" for r in lines))
    head = read_head(rollout)
    assert head is not None and head.title == prompt


def test_a_command_still_running_when_its_turn_closes_shows_what_it_printed_unfinished() -> None:
    lines = records(FIXTURE_CODEMIE)[:5]
    running = copy(lines[4])  # changed: its output, to what unified exec writes at 1 s
    running["payload"]["output"] = (
        "Chunk ID: bd7d7c\nWall time: 1.0012 seconds\nProcess running with session ID 41730\n"
        "Original token count: 12\nOutput:\n---\nname: using-superpowers\n"
    )
    done = copy(LOCALPUSH[62])  # the recorded `task_complete`, in this rollout's turn
    parser, items = parse([*lines[:4], running, done])
    result, turn = items[-2:]
    assert isinstance(result, ToolResultEvent) and turn.type == "turn_complete"
    assert result.output == f"{STILL_RUNNING}\n---\nname: using-superpowers\n"
    assert result.duration_ms is None  # the 1.0 s was only how long the model waited


def test_reasoning_in_parts_shows_each_part_once_in_either_order() -> None:
    event, item = copy(LOCALPUSH[12]), copy(LOCALPUSH[13])
    second = copy(event)
    second["payload"]["text"] = "**Checking the workflow**"  # changed: a second summary part
    item["payload"]["summary"].append({"type": "summary_text", "text": "[REDACTED part 2]"})
    head = LOCALPUSH[:12]
    _parser, events_first = parse([*head, event, second, item])
    assert [i.type for i in events_first].count("thinking") == 2
    _parser, item_first = parse([*head, item, event, second])
    assert [i.type for i in item_first].count("thinking") == 1


def test_a_pushed_rollout_cut_after_its_prompt_item_still_shows_the_prompt() -> None:
    # Changed: the recorded rollout cut right after the prompt's user item, before its event.
    conv = CodexRolloutConverter("d")
    out = [e for r in LOCALPUSH[:9] for e in conv.convert(r)]
    assert prompts([e.item for e in out]) == []
    out += conv.finish()
    prompt = LOCALPUSH[8]["payload"]["content"][0]["text"]
    assert prompts([e.item for e in out]) == [prompt]
    assert [e.title for e in out if e.title] == [prompt]


def test_a_command_the_user_ran_between_turns_gets_a_card_and_no_turn() -> None:
    # The recorded prompt's turn, closed by the recorded `task_complete`; then that line with its
    # payload changed to an end event with no call (the user's `!ls`, source `user_shell`).
    shell = dict(type="exec_command_end", call_id="user-shell-1", source="user_shell")
    shell.update(command=["/bin/zsh", "-lc", "ls"], aggregated_output="README.md\n", exit_code=0)
    end = {**copy(LOCALPUSH[62]), "payload": {**shell, "duration": {"secs": 0, "nanos": 41e6}}}
    _parser, items = parse([*LOCALPUSH, end])
    use, result = items[-2:]
    assert isinstance(use, ToolUseEvent) and (use.input, use.kind) == ("ls", "execute")
    assert isinstance(result, ToolResultEvent) and result.duration_ms == 41
    assert [i.type for i in items].count("turn_complete") == 1
