"""What a followed Claude session keeps per main-thread line to name rewind points stays small.

A live session is followed for hours at tens of lines a second (issue 34's fleet: 400 lines/s
over 20 sessions). The rewind tracker keeps a row for every main-thread record; held as the
record's uuid string in dicts it cost about 165 bytes a line that was never freed (about 30
now). Measured here with tracemalloc over 10,000 records shaped like Claude Code's (a new
uuid each, a reply text every few lines), after the records themselves are gone.
"""

from __future__ import annotations

import json
import tracemalloc
import uuid as uuidlib

from sidemirror.sources.claude.branches import BranchTracker

LINES = 10_000
# Compact rows are ~20 bytes a line plus one label per reply; dict rows were ~165 bytes.
MAX_BYTES_PER_LINE = 64


def _record(i: int, parent: str | None) -> dict[str, object]:
    line = {
        "type": "assistant" if i % 2 else "user",
        "uuid": str(uuidlib.uuid4()),
        "parentUuid": parent,
        "message": {"content": [{"type": "text", "text": f"step {i // 10}"}]}
        if i % 10 == 1
        else {"content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]},
    }
    return json.loads(json.dumps(line))  # decoded from a line, as the tailer hands it over


def test_rows_per_main_thread_line_stay_compact() -> None:
    tracker = BranchTracker()
    first = None
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        parent = None
        for i in range(LINES):
            record = _record(i, parent)
            tracker.note(record, end=(i + 1) * 300)
            parent = str(record["uuid"])
            first = first or parent
            del record
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown / LINES <= MAX_BYTES_PER_LINE, f"{grown / LINES:.0f} bytes kept per line"
    # Still able to name an early branch point after all that.
    assert first is not None and tracker.has(first)
