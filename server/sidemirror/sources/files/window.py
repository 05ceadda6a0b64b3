"""Decode only the lines that matter from a window of a JSONL file (startup indexing).

A substring search on the raw bytes costs far less than `json.loads`, so indexers name the keys
they look for and only lines containing one are decoded; a false positive costs one decode. The
window is searched whole, one `bytes.find` per key (memchr speed), not line by line: a regular
expression run over each line was a third of reading an archive's files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from sidemirror.sources.files.tailer import decode_line


def window_lines(data: bytes, *, cut_start: bool) -> list[bytes]:
    """Complete lines of a window read from a file: a line cut by either edge is dropped, never
    guessed at (`cut_start`: the window does not begin at the start of the file)."""
    lines = data.split(b"\n")
    if cut_start:
        lines = lines[1:]
    if not data.endswith(b"\n"):
        lines = lines[:-1]  # still being written, or cut by the window
    return lines


class Window:
    """The complete lines of `data`, a window read from a file, as `window_lines` cuts them."""

    def __init__(self, data: bytes, *, cut_start: bool) -> None:
        self.data = data
        self.start = 0
        if cut_start:
            first = data.find(b"\n")
            self.start = len(data) if first < 0 else first + 1
        self.end = max(self.start, data.rfind(b"\n") + 1)  # past the last complete line

    def records_with(self, *keys: bytes) -> Iterator[dict[str, Any]]:
        """The decoded objects of the lines that contain one of `keys`, in order."""
        data, pos, end = self.data, self.start, self.end
        while pos < end:
            hits = [hit for hit in (data.find(key, pos, end) for key in keys) if hit >= 0]
            if not hits:
                return
            record, pos = self._line_at(min(hits), pos)
            if record is not None:
                yield record

    def last_records_matching(self, pattern: re.Pattern[bytes]) -> Iterator[Any]:
        """The decoded objects of the lines where `pattern` matches (a test a substring cannot
        express: a key with a non-empty value), last line first. One pass of the pattern over
        the window: a session outside a git repository has an empty branch on every line."""
        starts = [m.start() for m in pattern.finditer(self.data, self.start, self.end)]
        next_line = self.end
        for at in reversed(starts):
            if at >= next_line:
                continue  # another match on a line already taken
            line_start = self.data.rfind(b"\n", self.start, at) + 1 or self.start
            record, _ = self._line_at(at, line_start)
            next_line = line_start
            if record is not None:
                yield record

    def _line_at(self, at: int, line_start: int) -> tuple[dict[str, Any] | None, int]:
        """The object on the line holding offset `at` (no line starts between `line_start` and
        it), if it is one, and where the next line starts."""
        data = self.data
        line_start = max(line_start, data.rfind(b"\n", line_start, at) + 1)
        line_end = data.find(b"\n", at, self.end)  # found: the window ends past a newline
        ok, value = decode_line(data[line_start:line_end])
        return (value if ok and isinstance(value, dict) else None), line_end + 1
