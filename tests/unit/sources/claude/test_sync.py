"""Sync points: a fresh parse from a real prompt yields, from the line after it on, exactly the
items a parse from byte 0 does (and so does the older warm-up form, from the next prompt on).

This is what lets a huge transcript be read from near its end with ids (byte positions) that
match any other load of it, so resume by id works whichever way the server loaded it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.models import SessionItem
from sidemirror.sources.claude import sync as claude_sync
from sidemirror.sources.claude.positions import last_seq_of_line
from sidemirror.sources.claude.sync import first_record_at_or_after, sync_points

from tests.harness.paths import FIXTURES as FIXTURE_ROOT
from tests.transcripts import SLOTS, positional_parse

CLAUDE = FIXTURE_ROOT / "claude"
TRANSCRIPTS = sorted(p for p in CLAUDE.rglob("*.jsonl") if not p.name.startswith("agent-"))


def dump(item: SessionItem) -> dict[str, Any]:
    return item.model_dump(mode="json", exclude={"turn"})


UUID = re.compile(rb'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')


def renamed(data: bytes) -> bytes:
    """The same lines with fresh ids (tool calls, record uuids, agent ids), as a later,
    similar session's would have: an id seen twice would mean the same call to the parser."""
    data = data.replace(b'"toolu_', b'"toolx_').replace(b'"agentId":"', b'"agentId":"x')
    return UUID.sub(rb'"x\1"', data)


# The fixtures are short sessions (one to three prompts); one long session made of all of them,
# twice, in two orders, has sync points after every kind of turn they hold. (turn-1.jsonl is
# the start of turn-2.jsonl: the same session read earlier.)
# The task-tool session is left out of the long one: its task list lives across turns, and a parse
# from a later prompt cannot know tasks created before it (task_plan.py; a TaskList restores it).
DISTINCT = [
    p for p in TRANSCRIPTS if p.name != "turn-1.jsonl" and p.parent.name != "schema-task-tools"
]
LONG = b"".join(p.read_bytes() for p in DISTINCT) + b"".join(
    renamed(p.read_bytes()) for p in DISTINCT[::-1]
)
CASES = {f"{p.parent.name}/{p.name[:12]}": p.read_bytes() for p in TRANSCRIPTS} | {"long": LONG}


@pytest.mark.parametrize("name", CASES)
def test_a_parse_from_any_sync_point_matches_the_whole_parse(name: str) -> None:
    data = CASES[name]
    whole = positional_parse(data)
    points = list(sync_points(data))
    for point in points:
        keep = point.offset * SLOTS
        tail = [i for i in positional_parse(data, point.warmup) if i.seq > keep]
        expected = [i for i in whole if i.seq > keep]
        assert [dump(i) for i in tail] == [dump(i) for i in expected], point
        # Turns before it were not counted, so the tail says so rather than guessing.
        assert all(getattr(i, "turn", None) is None for i in tail)
        assert any(i.type == "turn_complete" for i in tail) == any(
            i.type == "turn_complete" for i in expected
        )


@pytest.mark.parametrize("name", CASES)
def test_a_fresh_parse_from_any_prompt_matches_the_whole_parse_after_its_line(name: str) -> None:
    """What the server keeps when it reads a big transcript from a prompt near its end."""
    data = CASES[name]
    whole = positional_parse(data)
    prompts = [(p.warmup, p.offset) for p in sync_points(data)]
    prompts += [(p.offset, p.offset + data[p.offset :].index(b"\n") + 1) for p in sync_points(data)]
    for start, line_end in sorted(set(prompts)):
        keep = last_seq_of_line(line_end)
        tail = [i for i in positional_parse(data, start) if i.seq > keep]
        expected = [i for i in whole if i.seq > keep]
        assert [dump(i) for i in tail] == [dump(i) for i in expected], (start, line_end)
        assert all(getattr(i, "turn", None) is None for i in tail)


def test_the_fixtures_have_sync_points_to_check() -> None:
    found = {name: len(list(sync_points(data))) for name, data in CASES.items()}
    assert found["long"] >= 15 and sum(found.values()) >= 18, found


def record(**fields: Any) -> bytes:
    return json.dumps({"timestamp": "2026-01-01T00:00:00Z", **fields}).encode() + b"\n"


PROMPT = record(type="user", message={"role": "user", "content": "do it"})
TOOL_RESULT = record(
    type="user",
    message={"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
)
META = record(type="user", isMeta=True, message={"content": "caveat"})
INTERRUPTED = record(type="user", message={"content": "[Request interrupted by user]"})
SIDECHAIN = record(type="user", isSidechain=True, message={"content": "sub task"})
ESCAPED = PROMPT.replace(b'"user"', b'"\\u0075ser"')


def test_a_sync_point_is_each_real_prompt_after_the_first() -> None:
    data = PROMPT + TOOL_RESULT + META + INTERRUPTED + SIDECHAIN + PROMPT + PROMPT
    second = len(data) - 2 * len(PROMPT)
    assert [(p.warmup, p.offset) for p in sync_points(data)] == [
        (0, second),
        (second, second + len(PROMPT)),
    ]
    # A prompt spelled with escapes is still a prompt (missing one would be unsafe).
    assert [p.offset for p in sync_points(ESCAPED + PROMPT)] == [len(ESCAPED)]


def test_a_window_starting_mid_line_skips_that_line() -> None:
    data = PROMPT + PROMPT + PROMPT
    cut = 3
    points = list(sync_points(data[cut:], cut, aligned=False))
    assert [(p.warmup, p.offset) for p in points] == [(len(PROMPT), 2 * len(PROMPT))]


def test_sub_agent_files_are_placed_by_time(tmp_path: Path) -> None:
    agent = tmp_path / "agent.jsonl"
    lines = [
        json.dumps({"timestamp": ts, "n": n}).encode() + b"\n"
        for n, ts in enumerate(
            ["2026-01-01T00:00:01Z", "2026-01-01T00:00:03Z", "2026-01-01T00:00:05Z"]
        )
    ]
    agent.write_bytes(b"".join(lines) + b'{"timestamp": "2026-01-01T00:00:09Z"')  # partial last
    assert first_record_at_or_after(agent, "2026-01-01T00:00:03Z") == len(lines[0])
    assert first_record_at_or_after(agent, "2026-01-01T00:00:02Z") == len(lines[0])
    assert first_record_at_or_after(agent, "2026-01-01T00:00:00Z") == 0
    assert first_record_at_or_after(agent, "2026-01-01T00:00:07Z") == len(b"".join(lines))


def test_the_window_grows_until_it_holds_a_prompt_then_gives_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_sync, "TAIL_FROM_BYTES", 2_000)
    monkeypatch.setattr(claude_sync, "TAIL_WINDOW_BYTES", 500)
    monkeypatch.setattr(claude_sync, "TAIL_MAX_WINDOW_BYTES", 4_000)
    monkeypatch.setattr(claude_sync, "TAIL_KEEP_BYTES", 300)
    filler = TOOL_RESULT * (3_000 // len(TOOL_RESULT))
    path = tmp_path / "t.jsonl"
    # Small files are parsed whole.
    path.write_bytes(PROMPT + PROMPT)
    assert claude_sync.find_sync_point(path, path.stat().st_size) is None
    # Prompts ~3 kB before the end: found once the window has doubled enough; the parse starts
    # at the line of the last one and keeps what follows it.
    path.write_bytes(filler + PROMPT + PROMPT + filler)
    point = claude_sync.find_sync_point(path, path.stat().st_size)
    assert point is not None and (point.warmup, point.offset) == (
        len(filler) + len(PROMPT),
        len(filler) + 2 * len(PROMPT),
    )
    # A prompt closer to the end than TAIL_KEEP_BYTES is not taken: a first read holds more.
    path.write_bytes(filler + PROMPT + filler + PROMPT + TOOL_RESULT)
    point = claude_sync.find_sync_point(path, path.stat().st_size)
    assert point is not None and point.warmup == len(filler)
    # No prompt within the largest window: no sync point (the file is parsed whole).
    path.write_bytes(PROMPT + filler + filler)
    assert claude_sync.find_sync_point(path, path.stat().st_size) is None
    # Tool-result lines are passed over without being taken for prompts, however they spell
    # "user"; a prompt spelled with escapes is still found.
    escaped = PROMPT.replace(b'"user"', b'"\\u0075ser"')
    path.write_bytes(PROMPT + filler + escaped + filler)
    point = claude_sync.find_sync_point(path, path.stat().st_size)
    assert point is not None and point.warmup == len(PROMPT) + len(filler)
