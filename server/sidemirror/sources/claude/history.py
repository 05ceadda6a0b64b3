"""The part of a huge transcript that was not read at first, read back on demand a turn at a time.

A transcript over 32 MB is parsed from a sync point near its end (sync.py); what precedes it is
`skipped_bytes`. A client paging back into it asks for the items below a seq. Seqs are byte
positions (positions.py), so the seq names a place in the file; the items there are those of a
parse that warms up from a real prompt and keeps from the next one (the argument of sync.py),
so each turn is parsed alone: from the prompt before it, up to the line the seq names. Prompts
are found by scanning the file backwards in fixed windows, and at most `limit` items (or one
cached turn) are held at once, so memory stays bounded whatever the transcript's size.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidemirror.core.jsonline import decode_line
from sidemirror.core.models import SessionItem
from sidemirror.sources.claude.merge import merged
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.positions import MAIN, SLOTS, Positions
from sidemirror.sources.claude.sync import first_record_at_or_after, is_prompt
from sidemirror.sources.common import as_text
from sidemirror.sources.files.long_line import mark_cut
from sidemirror.sources.files.regular import open_regular
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

SCAN_WINDOW_BYTES = 1 << 20  # one backwards read while looking for prompts
CACHED_TURN_ITEMS = 2000  # a turn this small is kept whole for the next page of the same turn
READ_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class Prompt:
    offset: int  # where its line starts
    timestamp: str


@dataclass
class Turn:
    """Items parsed from the main-file range [start, ...) that are below `below` (all of them)."""

    start: int
    below: int
    items: list[SessionItem]


class EarlierItems:
    """Reads items below a seq from one session's files (the main transcript and its agents)."""

    def __init__(self, main: Path, stopping: threading.Event | None = None) -> None:
        self.main = main
        self.agents: dict[str, Path] = {}  # set by the session before each read
        self.stopping = stopping  # the source's: a read ends at its next chunk when it stops
        self._cached: Turn | None = None

    def before(self, below: int, count: int) -> tuple[list[SessionItem], bool]:
        """The last `count` items with a seq below `below`, oldest first, and whether any
        precede them. Runs in a worker thread."""
        pages: list[list[SessionItem]] = []
        got = 0
        while got <= count:  # one item more than asked says whether more precede
            items, start = self._turn_before(below, count + 1 - got)
            pages.append(items)
            got += len(items)
            if start == 0:
                break
            below = start * SLOTS + 1  # next: the items of the lines before the turn's prompt
        found = [item for page in reversed(pages) for item in page]
        return found[-count:], len(found) > count

    def _turn_before(self, below: int, count: int) -> tuple[list[SessionItem], int]:
        """The last `count` items below `below` of the turn they fall in (possibly fewer), and
        the main-file offset where that turn starts (0: the start of the file)."""
        line_end = (below - 1) // SLOTS  # items below `below` come from lines ending by here
        cached = self._cached
        if cached is not None and cached.start < line_end and below <= cached.below:
            kept = [i for i in cached.items if i.seq < below]
            return kept[-count:], cached.start
        warmup, start = self._prompts_before(line_end)
        keep = deque[SessionItem](maxlen=max(count, CACHED_TURN_ITEMS))
        total = 0
        for item in self._parse(warmup, start, line_end):
            if item.seq >= below:
                break
            keep.append(item)
            total += 1
        if total <= CACHED_TURN_ITEMS:
            self._cached = Turn(start.offset if start else 0, below, list(keep))
        items = list(keep)[-count:] if count else []
        return items, start.offset if start else 0

    def _prompts_before(self, end: int) -> tuple[Prompt | None, Prompt | None]:
        """The last two prompts whose lines start before `end`: (warm-up, turn start). The turn
        starts at byte 0 when fewer than two are found (a parse from the start needs none)."""
        found: list[Prompt] = []
        for prompt in prompts_backwards(self.main, end):
            found.append(prompt)
            if len(found) == 2:
                return found[1], found[0]
        return None, None

    def _parse(
        self, warmup: Prompt | None, start: Prompt | None, line_end: int
    ) -> Iterator[SessionItem]:
        """Items of the main file's lines from `start` up to the one ending at `line_end`
        (and the agents' records merged among them), parsed from `warmup`."""
        main_from = warmup.offset if warmup else 0
        keep_after = start.offset * SLOTS if start else 0
        streams: dict[str, Iterable[tuple[int, Any]]] = {
            MAIN: self._records(self.main, main_from),
        }
        for key, path in self.agents.items():
            at = first_record_at_or_after(path, warmup.timestamp) if warmup else 0
            streams[key] = self._records(path, at)
        parser = ClaudeParser(from_start=warmup is None)
        positions = Positions()
        for key, end, record in merged(streams):
            if key == MAIN and end > line_end:
                return
            items = mark_cut(parser.feed(record, key, end))
            positions.number(key, end, items)
            for item in items:
                if item.seq > keep_after:
                    yield item

    def _records(self, path: Path, offset: int) -> Iterator[tuple[int, Any]]:
        tailer = JsonlTailer(path, offset=offset, objects_only=True, cancel=self.stopping)
        yield from tailer.stream(TailBatch(offset=offset), None, READ_CHUNK_BYTES)


def prompts_backwards(path: Path, end: int) -> Iterator[Prompt]:
    """Real prompts of the main thread whose lines start before `end` (a line boundary),
    newest first, reading the file backwards a window at a time. A line longer than a window
    is passed over: a huge line is tool output, and a prompt missed only merges two turns."""
    try:
        fh = open_regular(path)
    except OSError:
        return
    with fh:
        hi, hi_is_boundary = end, True
        while hi > 0:
            lo = max(0, hi - SCAN_WINDOW_BYTES)
            data = os.pread(fh.fileno(), hi - lo, lo)
            first = 0 if lo == 0 else data.find(b"\n") + 1
            last = len(data) if hi_is_boundary else data.rfind(b"\n") + 1
            if lo > 0 and first == 0:  # inside one line longer than the window
                hi, hi_is_boundary = lo, False
                continue
            found = list(_prompts_in(data, first, last, lo))
            yield from reversed(found)
            hi, hi_is_boundary = lo + first, True


def _prompts_in(data: bytes, pos: int, stop: int, base: int) -> Iterator[Prompt]:
    while pos < stop:
        nl = data.find(b"\n", pos, stop)
        if nl < 0:
            return
        line = data[pos:nl]
        # As sync.py reads them: most lines need no decoding.
        if b'"user"' in line or b"\\u" in line:
            ok, record = decode_line(line)
            if ok and isinstance(record, dict) and is_prompt(record):
                yield Prompt(base + pos, as_text(record.get("timestamp")))
        pos = nl + 1
