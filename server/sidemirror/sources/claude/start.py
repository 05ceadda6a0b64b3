"""Where a Claude Code session's parse starts: byte 0, or a sync point near the end of a huge
transcript (sync.py), for a first read and for a restart that replays the merge journal.

A start is where each file's tailer begins (`starts`: file key -> byte offset; the session's own
file under MAIN) and the main-file offset from which items are kept (`keep_from`): what the
parser yields before it is its warm-up. Sub-agent files are placed against the warm-up prompt:
by the journal's recorded order where it has one, else by time as the merge would order them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.claude.sync import SyncPoint, find_sync_point, first_record_at_or_after
from sidemirror.sources.files.merge_order import Entry, MergeOrder


@dataclass(frozen=True)
class Start:
    starts: dict[str, int] = field(default_factory=dict)  # {} = every file from byte 0
    keep_from: int = 0


def first_read(main: Path, agents: dict[str, Path]) -> Start:
    """A first read (or a rebuild): everything, unless the transcript is huge."""
    point = _sync_point(main, 0)
    if point is None:
        return Start()
    return Start({MAIN: point.warmup, **_by_time(agents, point, {})}, point.offset)


def skip_ahead(journal: MergeOrder, main: Path, agents: dict[str, Path]) -> MergeOrder:
    """`journal`, or when its transcript has grown huge past where it starts, the journal moved
    to a sync point near the end (rewritten): same epoch and ids, without replaying what
    precedes it. Sub-agent files start where the journal had read them when the main file
    reached the warm-up line."""
    start = journal.starts.get(MAIN, 0)
    point = _sync_point(main, start)
    if point is None or point.warmup <= start:
        return journal
    at = {key: offset for key, offset in journal.starts.items() if key != MAIN}
    rest: list[Entry] = []
    for index, entry in enumerate(journal.entries):
        if entry.key != MAIN:
            at[entry.key] = entry.end
        elif entry.end > point.warmup:
            rest = journal.entries[index:]
            break
    else:
        # The file grew past its journal: what follows is merged by time, as on a first read.
        at = _by_time(agents, point, at)
    moved = MergeOrder(journal.path, journal.epoch, rest)
    moved.starts = {MAIN: point.warmup, **at}
    moved.keep_from = point.offset
    moved.rewrite()
    return moved


def _sync_point(main: Path, start: int) -> SyncPoint | None:
    try:
        size = os.stat(main).st_size
    except OSError:
        return None
    return find_sync_point(main, size, start)


def _by_time(agents: dict[str, Path], point: SyncPoint, read: dict[str, int]) -> dict[str, int]:
    """Each sub-agent file from its first line the merge puts after the warm-up prompt (lines
    older than it belong to turns before), never before what was already read."""
    return {
        key: max(read.get(key, 0), first_record_at_or_after(path, point.warmup_timestamp))
        for key, path in agents.items()
    } | {key: offset for key, offset in read.items() if key not in agents}
