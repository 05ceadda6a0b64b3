"""The part of a big transcript that was not read at first, read back on demand a turn at a time.

A transcript over 4 MB is parsed from a sync point near its end (sync.py); what precedes it is
`skipped_bytes`. A client paging back into it asks for the items below a seq. Seqs are byte
positions (positions.py), so the seq names a place in the file; the items there are those of a
fresh parse from the real prompt before it, past that prompt's line (the argument of sync.py),
so each turn is parsed alone: from the prompt before it, up to the line the seq names. Prompts
are found by scanning the file backwards in fixed windows, once: where they start is kept
(`PromptIndex`, a few bytes a turn), so paging on never scans again. At most a few cached turns
(`CACHED_ITEMS` items each, one per reader paging back: a client and the search index) are held
at once, so memory stays bounded whatever the transcript's size.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidemirror.core.history import ReadGate
from sidemirror.core.jsonline import decode_line
from sidemirror.core.models import SessionItem
from sidemirror.sources.claude.merge import merged
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.positions import MAIN, SLOTS, Positions
from sidemirror.sources.claude.straddle import EarlierCalls
from sidemirror.sources.claude.sync import first_record_at_or_after, is_prompt, maybe_prompt
from sidemirror.sources.common import as_text
from sidemirror.sources.files.long_line import mark_cut
from sidemirror.sources.files.regular import open_regular
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

SCAN_WINDOW_BYTES = 1 << 20  # one backwards read while looking for prompts
CACHED_ITEMS = 600  # items of a parse kept for the next pages (a read-ahead's worth)
# Parses kept: readers paging back at once (a client, the search index filling) each keep theirs.
CACHED_PARSES = 2
# A read back parses whole turns, at least this much of the file: a page of 200 items is up to
# ~700 KB of a transcript of long agentic turns, so the next pages are served from what one
# read got (fewer, larger reads: the cost per item is the parse's either way).
READ_AHEAD_BYTES = 1 << 20
READ_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class Prompt:
    offset: int  # where its line starts
    end: int  # where it ends (just past its newline)
    timestamp: str


@dataclass
class Known:
    """Every item with `low < seq < high`, in order (what the last parse read)."""

    low: int
    high: int
    items: list[SessionItem]


class EarlierItems:
    """Reads items below a seq from one session's files (the main transcript and its agents).

    A parse starts at a prompt P with a fresh parser, which from the end of P's line on is in
    the state a parse from byte 0 would be in there (sync.py); only the items of P's own line
    (the previous turn's `turn_complete` and the prompt, numbered after it) need the turn before,
    so they come from the next parse back, which starts at the prompt before P. Each parse thus
    reads about one turn, and keeps what it read for the next pages.
    """

    def __init__(self, main: Path, stopping: threading.Event | None = None) -> None:
        self.main = main
        self.agents: dict[str, Path] = {}  # set by the session before each read
        self.stopping = stopping  # the source's: a read ends at its next chunk when it stops
        self.prompts = PromptIndex(main)
        self._known: list[Known] = []  # newest use last; reads run in worker threads
        self._lock = threading.Lock()
        self._gate = ReadGate()

    def before(self, below: int, count: int) -> tuple[list[SessionItem], bool]:
        """The last `count` items with a seq below `below`, oldest first, and whether any
        precede them. Runs in a worker thread."""
        pages: list[list[SessionItem]] = []
        got = 0
        client = self._gate.enter()
        try:
            while got <= count and below > 1:  # one more than asked says whether more precede
                items, below = self._chunk_before(below, count + 1 - got, client)
                pages.append(items)
                got += len(items)
        finally:
            self._gate.leave(client)
        found = [item for page in reversed(pages) for item in page]
        return found[-count:], len(found) > count

    def after(self, above: int, until: int, count: int) -> tuple[list[SessionItem], bool]:
        """The first `count` items with `above < seq < until`, oldest first, and whether more
        such follow (a reader going to the start of the session and down from there). Parses
        forward from the last prompt before the line of `above` (from byte 0 for `above` 0):
        every item after that prompt's own line is right (see the class comment). Runs in a
        worker thread; holds one page."""
        start = self.prompts.before(above // SLOTS) if above > 0 else None
        found: list[SessionItem] = []
        client = self._gate.enter()
        try:
            for step, item in enumerate(self._parse(start, (until - 1) // SLOTS)):
                if not client and step % 64 == 0:
                    self._gate.wait_turn(self.stopping)
                if item.seq >= until:
                    break
                if item.seq > above:
                    found.append(item)
                    if len(found) > count:  # one more than asked says whether more follow
                        break
        finally:
            self._gate.leave(client)
        return found[:count], len(found) > count

    def _chunk_before(self, below: int, count: int, client: bool) -> tuple[list[SessionItem], int]:
        """Up to `count` of the last items below `below`, and the bound below which the items
        before them lie (0: none, the start of the file was reached)."""
        known = self._held(below)
        if known is None:  # none held below it
            known = self._read_back(below, client)
            with self._lock:
                self._known = [*self._known, known][-CACHED_PARSES:]
        kept = [item for item in known.items if item.seq < below]
        if len(kept) > count:
            return kept[-count:], kept[-count].seq
        return kept, known.low + 1 if known.low else 0

    def _held(self, below: int) -> Known | None:
        with self._lock:
            for index, known in enumerate(self._known):
                if known.low + 1 < below <= known.high:
                    self._known.append(self._known.pop(index))
                    return known
        return None

    def _read_back(self, below: int, client: bool = True) -> Known:
        """Parse from the last prompt whose line ends before the line that `below` falls in
        (from byte 0 if there is none); keep the items it gets right, up to CACHED_ITEMS."""
        line_end = (below - 1) // SLOTS  # items below `below` come from lines ending by here
        start = self.prompts.before(line_end)
        while start is not None and line_end - start.offset < READ_AHEAD_BYTES:
            start = self.prompts.before(start.end)  # None: from byte 0, where all is right
        # Items of the start prompt's own line, and sub-agent items numbered after it, are
        # the next parse's (see the class comment); from byte 0, every item is right.
        low = 0 if start is None else (start.end + 1) * SLOTS - 1
        keep = deque[SessionItem](maxlen=CACHED_ITEMS)
        for step, item in enumerate(self._parse(start, line_end)):
            if not client and step % 64 == 0:
                self._gate.wait_turn(self.stopping)
            if item.seq >= below:
                break
            if item.seq > low:
                keep.append(item)
        items = list(keep)
        if len(items) == CACHED_ITEMS:  # more than kept: what is kept is complete from there
            low = max(low, items[0].seq - 1)
        return Known(low, below, items)

    def _parse(self, start: Prompt | None, line_end: int) -> Iterator[SessionItem]:
        """Items of the main file's lines from `start` up to the one ending at `line_end` (and
        the agents' records merged among them), with a fresh parser."""
        streams: dict[str, Iterable[tuple[int, Any]]] = {
            MAIN: self._records(self.main, start.offset if start else 0),
        }
        for key, path in self.agents.items():
            at = first_record_at_or_after(path, start.timestamp) if start else 0
            streams[key] = self._records(path, at)
        calls = EarlierCalls(self.main, start.offset) if start else None
        parser = ClaudeParser(from_start=start is None, earlier_call=calls)
        positions = Positions()
        for key, end, record in merged(streams):
            if key == MAIN and end > line_end:
                return
            items = mark_cut(parser.feed(record, key, end))
            positions.number(key, end, items)
            yield from items

    def _records(self, path: Path, offset: int) -> Iterator[tuple[int, Any]]:
        tailer = JsonlTailer(path, offset=offset, objects_only=True, cancel=self.stopping)
        yield from tailer.stream(TailBatch(offset=offset), None, READ_CHUNK_BYTES)


class PromptIndex:
    """Where the real prompts of the main thread start, in the part of the file scanned so far:
    `[low, high)`, grown downwards as readers page back (they all page back from the same
    sync point). A few dozen bytes a turn."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._prompts: list[Prompt] = []  # by offset, all in [low, high)
        self._ends: list[int] = []  # their `end`s, for bisection
        self._low = self._high = -1
        self._lock = threading.Lock()

    def before(self, line_end: int) -> Prompt | None:
        """The last prompt whose line ends before the line ending at `line_end` (a line
        boundary); None when there is none (the parse then starts at byte 0)."""
        with self._lock:
            if not self._low <= line_end <= self._high:  # elsewhere: start a fresh range
                self._prompts, self._ends, self._low, self._high = [], [], line_end, line_end
            at = bisect.bisect_left(self._ends, line_end)
            if at > 0:
                return self._prompts[at - 1]
            for low, found in _windows_backwards(self.path, self._low):
                # Newest first: each is older than every prompt held.
                self._prompts[:0] = found[::-1]
                self._ends[:0] = [p.end for p in found[::-1]]
                self._low = low
                at = bisect.bisect_left(self._ends, line_end)
                if at > 0:
                    return self._prompts[at - 1]
            self._low = 0
            return None


def _windows_backwards(path: Path, end: int) -> Iterator[tuple[int, list[Prompt]]]:
    """The file read backwards from `end` (a line boundary) a window at a time: for each, the
    line boundary it reached down to and the real prompts of the main thread whose lines start
    in what it read, newest first. A line longer than a window is passed over: a huge line is
    tool output, and a prompt missed only merges two turns."""
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
            yield lo + first, found[::-1]
            hi, hi_is_boundary = lo + first, True


def _prompts_in(data: bytes, pos: int, stop: int, base: int) -> Iterator[Prompt]:
    while pos < stop:
        nl = data.find(b"\n", pos, stop)
        if nl < 0:
            return
        if maybe_prompt(data, pos, nl):  # as sync.py reads them: most lines need no decoding
            ok, record = decode_line(data[pos:nl])
            if ok and isinstance(record, dict) and is_prompt(record):
                yield Prompt(base + pos, base + nl + 1, as_text(record.get("timestamp")))
        pos = nl + 1
