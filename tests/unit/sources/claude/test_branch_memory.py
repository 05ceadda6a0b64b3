"""What a followed Claude session keeps to name rewind points does not grow with its lines.

A live session is followed for hours at tens of lines a second (issue 34's fleet: 400 lines/s
over 20 sessions). The rewind tracker once kept a row for every main-thread record: held as the
record's uuid string in dicts it cost about 165 bytes a line that was never freed, as compact
rows ~30, plus each reply's label. It now keeps one row a turn (the record each prompt continued
from, where a rewind can return) and the latest few hundred records. Measured here with
tracemalloc over records shaped like Claude Code's (a new uuid each, a prompt every 50 lines, a
reply text every few), after the records themselves are gone.
"""

from __future__ import annotations

import json
import tracemalloc
import uuid as uuidlib

from sidemirror.sources.claude import branches
from sidemirror.sources.claude.branches import RECENT_RECORDS, BranchTracker
from sidemirror.sources.claude.positions import last_seq_of_line

WARM_UP = 2 * RECENT_RECORDS  # the latest records' window full: what stays after is per turn
LINES = 20_000
TURN = 50  # lines a turn: a prompt, then tool calls, results and replies
# One row a turn (20 bytes and a label of up to 100 characters) is 2-3 bytes a line; a row a
# line was ~30 bytes and the labels ~25 more.
MAX_BYTES_PER_LINE = 4


def _record(i: int, parent: str | None) -> dict[str, object]:
    if i % TURN == 0:
        line: dict[str, object] = {"type": "user", "message": {"content": f"prompt {i // TURN}"}}
    elif i % 2:
        line = {"type": "assistant", "message": {"content": [{"type": "text", "text": f"r{i}"}]}}
    else:
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}
        line = {"type": "user", "message": {"content": [result]}}
    line |= {"uuid": str(uuidlib.uuid4()), "parentUuid": parent}
    return json.loads(json.dumps(line))  # decoded from a line, as the tailer hands it over


def test_what_is_kept_grows_by_the_turn_not_by_the_line() -> None:
    tracker = BranchTracker()
    parent: str | None = None
    points: list[tuple[str, int]] = []  # (uuid, end) of each record a prompt continued from
    tracemalloc.start()
    try:
        for i in range(LINES):
            if i == WARM_UP:
                before = tracemalloc.take_snapshot()
            record = _record(i, parent)
            if i % TURN == 0 and parent is not None:
                points.append((parent, i * 300))
            tracker.note(record, end=(i + 1) * 300)
            parent = str(record["uuid"])
            del record
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # What the tracker allocated, not what this test keeps to check it (`points`).
    own = [tracemalloc.Filter(True, branches.__file__)]
    grown = sum(
        s.size_diff
        for s in after.filter_traces(own).compare_to(before.filter_traces(own), "filename")
    )
    per_line = grown / (LINES - WARM_UP)
    assert per_line <= MAX_BYTES_PER_LINE, f"{per_line:.1f} bytes kept per line"
    # The first turn's branch point, 20,000 lines back, is still named and placed exactly.
    first, end = points[0]
    assert tracker.has(first)
    prompt = {"type": "user", "uuid": str(uuidlib.uuid4()), "parentUuid": first}
    rewind = tracker.rewind(prompt, "2026-12-05T00:00:00Z")
    assert rewind is not None
    assert rewind.content == f"Rewound to: r{TURN - 1}"  # the reply that ended the first turn
    assert rewind.abandoned_after == last_seq_of_line(end)


def test_a_forgotten_record_mid_turn_is_no_rewind_that_folds_everything() -> None:
    """A parent read long ago in the middle of a turn is not known any more: both branches stay
    shown rather than everything read being folded away as if the parent came before it."""
    tracker = BranchTracker()
    parent: str | None = None
    mid_turn = ""
    for i in range(RECENT_RECORDS * 3):
        record = _record(i, parent)
        tracker.note(record, end=(i + 1) * 300)
        parent = str(record["uuid"])
        mid_turn = mid_turn or (parent if i == 7 else "")
    prompt = {"type": "user", "uuid": str(uuidlib.uuid4()), "parentUuid": mid_turn}
    assert tracker.rewind(prompt, "2026-12-05T00:00:00Z") is None
