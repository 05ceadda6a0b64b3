"""Where the parse of a big transcript may start: a real prompt near its end.

Item ids are byte positions (positions.py), so a parse may start part-way through a file and
still number its items as a parse from byte 0 would. It must also *produce* the same items,
which depends on what the parser carries from line to line: the open turn, whose
`turn_complete` (tokens, cost, status) the next prompt emits, and through it the tool calls and
sub-agents in flight. A real prompt resets all of that: it closes the open turn and opens a
fresh one. So a fresh parser that starts at a real prompt P is, once past P's line, in the state
a parse from byte 0 is in there, and from the next line on yields the same items. (Claude Code
rarely writes an `end_turn` stop reason or a `turn_duration` line, so "a turn known closed" is
too rare to wait for: a prompt is not.) Only the items of P's own line (the previous turn's
`turn_complete`, a rewind marker, the prompt) and the sub-agent items merged right after it
need the turn before: they are left to a read of the skipped part (history.py), which parses
that turn from the prompt before P. A tool result after P whose call came before it (a call
still running when the prompt was sent) is named from that call's line (straddle.py).

So the **sync point** is P: the parse starts at its line and keeps the items of the lines after
it. What a parse from a sync point cannot know is the part before it: the turn count (so its
`turn_complete` items carry `turn: null`), a title from an early first prompt (the indexed
title is kept), and a sub-agent still running from an earlier turn (a background agent whose
Task was answered before P: its later lines are not linked).

`sync_points` gives the older, stronger warm-up form (a parse from one prompt yields, from the
next prompt's line on, the items of a parse from byte 0): tests check both against the fixtures.
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

# A transcript with at least this much left to parse is read from a sync point near its end:
# a parse runs at 10-40 MB/s on a busy 2-core machine, so a first read stays near 60 ms whatever
# the size (the rest is read on demand, history.py).
TAIL_FROM_BYTES = 4 * 1024 * 1024
# The sync point is the last prompt at least TAIL_KEEP_BYTES before the end, so a first read
# holds a few hundred items even when the last turn is short; it is looked for in the last
# TAIL_WINDOW_BYTES first, then in a window twice as large, up to TAIL_MAX_WINDOW_BYTES.
TAIL_KEEP_BYTES = 256 * 1024
TAIL_WINDOW_BYTES = 768 * 1024
TAIL_MAX_WINDOW_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class SyncPoint:
    warmup: int  # where the parse starts: the line of a real prompt
    warmup_timestamp: str  # that prompt's, to place sub-agent files' records against it
    offset: int  # where the items kept start: just past that prompt's line (`find_sync_point`),
    # or at the line of the next real prompt (`sync_points`, the warm-up form)


def is_prompt(record: dict[str, Any]) -> bool:
    """A real prompt of the main thread: the only line that opens a turn (see ClaudeParser)."""
    return (
        record.get("type") == "user"
        and record.get("isSidechain") is not True
        and user_kind(record)[0] == "prompt"
    )


def find_sync_point(path: Path, end: int, start: int = 0) -> SyncPoint | None:
    """The last real prompt that starts at least TAIL_KEEP_BYTES before `end`, within the last
    TAIL_WINDOW_BYTES of `path` and after the line start `start` (the window doubles up to
    TAIL_MAX_WINDOW_BYTES), as a sync point: the parse starts at its line and keeps what follows
    it. None when none is found there, or when the file is small enough to parse whole."""
    if end - start < TAIL_FROM_BYTES:
        return None
    window = TAIL_WINDOW_BYTES
    latest = end - TAIL_KEEP_BYTES
    try:
        with open_regular(path) as fh:
            while True:
                low = max(start, end - window)
                data = os.pread(fh.fileno(), end - low, low)
                found = None
                for offset, line_end, record in _prompt_lines(data, low, low == start):
                    if offset > latest:
                        break
                    if offset > start:  # a prompt at `start` gains nothing over a replay
                        found = offset, line_end, record
                if found is not None:
                    offset, line_end, record = found
                    return SyncPoint(offset, as_text(record.get("timestamp")), line_end)
                if low == start or window >= TAIL_MAX_WINDOW_BYTES:
                    return None
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
    for offset, _end, record in _prompt_lines(data, base, aligned):
        yield offset, record


def _prompt_lines(
    data: bytes, base: int, aligned: bool
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Each real prompt's line in `data`: where it starts, where it ends (past its newline),
    and its record."""
    pos = 0
    if not aligned:  # begin after the end of the line `base` falls in
        pos = data.find(b"\n") + 1
        if pos == 0:
            return
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return  # a partial last line is not read yet, so it is not a start
        if maybe_prompt(data, pos, nl):
            ok, record = decode_line(data[pos:nl])
            if ok and isinstance(record, dict) and is_prompt(record):
                yield base + pos, base + nl + 1, record
        pos = nl + 1


def maybe_prompt(data: bytes, start: int, stop: int) -> bool:
    """Whether the line `data[start:stop]` may be a real prompt, by its bytes alone: most lines
    (tool output, answers) need no decoding. A prompt's line holds `"user"`, or spells it with
    escapes. A line holding the bytes `"tool_result"` is passed over: that is a tool-result
    block's type (a quote inside a JSON string is escaped, so only a text ending in `"tool_result`
    could spell them too). Tool-result lines are most of a transcript's bytes. Passing over a
    prompt is safe wherever prompts are looked for here: a parse then starts at an earlier one."""
    if data.find(b'"user"', start, stop) < 0 and data.find(b"\\u", start, stop) < 0:
        return False
    return data.find(b'"tool_result"', start, stop) < 0


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
