"""Where the parse of a huge transcript may start: a point near its end that yields the same items.

Item ids are byte positions (claude_positions.py), so a parse may start part-way through a file
and still number its items as a parse from byte 0 would. It must also *produce* the same items,
which depends on what the parser carries from line to line: the open turn, whose
`turn_complete` (tokens, cost, status) the next prompt emits, and through it the tool calls and
sub-agents in flight. A real prompt resets all of that: it closes the open turn and opens a
fresh one. So a parse that **warms up** from one real prompt reaches the next in the same state
as a parse from byte 0, and from that next prompt on — the **sync point** — yields the same
items; what the warm-up yields is dropped. (Claude Code rarely writes an `end_turn` stop reason
or a `turn_duration` line, so "a turn known closed" is too rare to wait for: a prompt is not.)

What a parse from a sync point cannot know is the part before it: the turn count (so its
`turn_complete` items carry `turn: null`), a title from an early first prompt (the indexed
title is kept), and a sub-agent still running from an earlier turn (a background agent whose
Task was answered before the warm-up: its later lines are not linked).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidemirror.core.jsonline import decode_line
from sidemirror.sources.claude.tools import user_kind
from sidemirror.sources.common import as_text
from sidemirror.sources.files.regular import open_regular

# A transcript with at least this much left to parse is read from a sync point near its end: a
# whole parse runs at ~100 MB/s here, so this keeps a first read of any session near 300 ms.
TAIL_FROM_BYTES = 32 * 1024 * 1024
# How far from the end to look for the sync point first (a few thousand items), and at most.
TAIL_WINDOW_BYTES = 4 * 1024 * 1024
TAIL_MAX_WINDOW_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class SyncPoint:
    warmup: int  # where the parse starts: the line of the real prompt before `offset`
    warmup_timestamp: str  # that prompt's, to place sub-agent files' records against it
    offset: int  # where the items kept start: the line of the next real prompt


def is_prompt(record: dict[str, Any]) -> bool:
    """A real prompt of the main thread: the only line that opens a turn (see ClaudeParser)."""
    return (
        record.get("type") == "user"
        and record.get("isSidechain") is not True
        and user_kind(record)[0] == "prompt"
    )


def find_sync_point(path: Path, end: int, start: int = 0) -> SyncPoint | None:
    """The first sync point in the last TAIL_WINDOW_BYTES of `path` before `end` and after the
    line start `start` (the window doubles up to TAIL_MAX_WINDOW_BYTES); None when none is found
    there or what lies between is small enough to parse whole."""
    if end - start < TAIL_FROM_BYTES:
        return None
    window = TAIL_WINDOW_BYTES
    try:
        with open_regular(path) as fh:
            while True:
                low = max(start, end - window)
                data = os.pread(fh.fileno(), end - low, low)
                point = next(sync_points(data, low, aligned=low == start), None)
                if point is not None or low == start or window >= TAIL_MAX_WINDOW_BYTES:
                    return point
                window *= 2
    except OSError:
        return None


def sync_points(data: bytes, base: int = 0, *, aligned: bool = True) -> Iterator[SyncPoint]:
    """Every sync point in `data` (bytes of a transcript from offset `base`, which may fall
    inside a line unless `aligned`), in file order: each real prompt after the first."""
    before: tuple[int, str] | None = None
    for offset, record in _prompts(data, base, aligned):
        if before is not None:
            yield SyncPoint(before[0], before[1], offset)
        before = (offset, as_text(record.get("timestamp")))


def _prompts(data: bytes, base: int, aligned: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    pos = 0
    if not aligned:  # begin after the end of the line `base` falls in
        pos = data.find(b"\n") + 1
        if pos == 0:
            return
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return  # a partial last line is not read yet, so it is not a start
        line = data[pos:nl]
        # Most lines (tool output) need no decoding. A line that spells "user" with escapes is
        # decoded too: missing a prompt would be unsafe.
        if b'"user"' in line or b"\\u" in line:
            ok, record = decode_line(line)
            if ok and isinstance(record, dict) and is_prompt(record):
                yield base + pos, record
        pos = nl + 1


def first_record_at_or_after(path: Path, timestamp: str) -> int:
    """The offset of the first line of a sub-agent file that the merge (merge_order.py) puts
    after a main-file record stamped `timestamp`: the first whose timestamp so far is at least
    it (ties go to the main file). The file's complete length when there is none."""
    offset = 0
    latest = ""
    try:
        with open_regular(path) as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # partial: its record is not read yet
                ok, record = decode_line(line)
                stamp = record.get("timestamp") if ok and isinstance(record, dict) else None
                if isinstance(stamp, str) and stamp > latest:
                    latest = stamp
                if latest >= timestamp and latest:
                    return offset
                offset += len(line)
    except OSError:
        return 0
    return offset
