"""Rewinds: a recorded transcript with a branch shows where it branched and what was abandoned.

The base is a real Claude Code 2.1.38 transcript (tests/fixtures/claude/spotter/tool_heavy.jsonl):
its parallel tool calls make side branches in the `parentUuid` DAG that are not rewinds. The
rewind is appended the way Claude Code writes one: the old lines stay, and the next prompt's
`parentUuid` points back at the message the user rewound to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import SessionItem, SystemEvent, UserEvent
from sidemirror.sources.claude.positions import SLOTS

from tests.harness.paths import FIXTURES
from tests.transcripts import positional_parse
from tests.unit.sources.claude.test_parser import SESSIONS, parse_session

TOOL_HEAVY = FIXTURES / "claude" / "spotter" / "tool_heavy.jsonl"
BRANCH_POINT = 11  # "Phoenix server is starting in the background…": the user rewinds to here
NEW_PROMPT = "Check the server log for the port instead"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rewind_lines(base: list[dict[str, Any]], *, compact_after: bool) -> list[dict[str, Any]]:
    """A rewind to BRANCH_POINT, a reply, then (optionally) a compaction and one more prompt."""
    point = base[BRANCH_POINT]
    env = {k: point[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version")}
    ts = base[-1]["timestamp"]
    out: list[dict[str, Any]] = []

    def add(record: dict[str, Any], parent: str | None) -> str:
        uuid = f"9e000000-0000-4000-8000-{len(out):012d}"
        out.append({"parentUuid": parent, **env, **record, "uuid": uuid, "timestamp": ts})
        return uuid

    prompt = add(
        {"type": "user", "message": {"role": "user", "content": NEW_PROMPT}}, point["uuid"]
    )
    reply = {
        "role": "assistant",
        "model": "claude-opus-4-6",
        "id": "msg_rewound",
        "type": "message",
    }
    reply |= {
        "content": [{"type": "text", "text": "It listens on 4000."}],
        "stop_reason": "end_turn",
    }
    leaf = add({"type": "assistant", "message": reply}, prompt)
    if compact_after:
        boundary = {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
        }
        boundary |= {"logicalParentUuid": leaf, "compactMetadata": {"trigger": "manual"}}
        leaf = add(boundary, None)
        summary = {"role": "user", "content": "This session is being continued from a previous…"}
        leaf = add({"type": "user", "isCompactSummary": True, "message": summary}, leaf)
        add({"type": "user", "message": {"role": "user", "content": "Now restart it"}}, leaf)
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def rewinds(items: list[SessionItem]) -> list[SystemEvent]:
    return [i for i in items if isinstance(i, SystemEvent) and i.subtype == "rewind"]


@pytest.mark.parametrize("name", sorted(SESSIONS) + ["tool-heavy"])
def test_recorded_transcripts_without_a_rewind_show_none(name: str) -> None:
    path = TOOL_HEAVY if name == "tool-heavy" else SESSIONS[name]
    assert rewinds(parse_session(path)) == []


def test_a_rewind_names_the_branch_point_and_the_abandoned_items(tmp_path: Path) -> None:
    base = lines(TOOL_HEAVY)
    path = write(tmp_path / "s.jsonl", base + rewind_lines(base, compact_after=False))
    items = positional_parse(path.read_bytes())
    [rewind] = rewinds(items)
    assert rewind.content.startswith("Rewound to: Phoenix server is starting in the background")
    assert rewind.abandoned_after is not None
    # Every item from a line after the branch point, up to the rewind, is abandoned; none before.
    ends = [len(t) + 1 for t in path.read_text().splitlines()]
    branch_end = sum(ends[: BRANCH_POINT + 1])
    abandoned = [i for i in items if rewind.abandoned_after < i.seq < rewind.seq]
    kept_before = [i for i in items if i.seq <= rewind.abandoned_after]
    assert abandoned and kept_before
    assert all(i.seq // SLOTS > branch_end for i in abandoned)
    assert all(i.seq // SLOTS <= branch_end for i in kept_before)
    abandoned_prompts = [i.content for i in abandoned if isinstance(i, UserEvent)]
    assert any(p.startswith("scrolling back in xterm.js") for p in abandoned_prompts)
    # The new branch goes on after the rewind line: its prompt, the reply, the closed turn.
    after = [i for i in items if i.seq > rewind.seq or i is rewind]
    assert [i.type for i in after][:2] == ["system", "user"]
    assert isinstance(after[1], UserEvent) and after[1].content == NEW_PROMPT
    assert after[-1].type == "turn_complete"


def test_compaction_after_a_rewind_keeps_the_branch_in_use(tmp_path: Path) -> None:
    base = lines(TOOL_HEAVY)
    path = write(tmp_path / "s.jsonl", base + rewind_lines(base, compact_after=True))
    items = parse_session(path)
    assert len(rewinds(items)) == 1  # the compaction and the prompt after it are no rewind
    assert [i.content for i in items if isinstance(i, UserEvent)][-1] == "Now restart it"


def test_a_prompt_with_no_parent_mid_file_is_not_taken_for_a_rewind(tmp_path: Path) -> None:
    """Files joined from several runs of a session start each run with no parent: that is not
    enough to fold the whole history before it."""
    base = lines(TOOL_HEAVY)
    again = {**base[3], "uuid": "9e000000-0000-4000-8000-00000000ffff", "parentUuid": None}
    path = write(tmp_path / "s.jsonl", base + [again])
    assert rewinds(parse_session(path)) == []
