"""The order in which the records of a session's files are fed to its parser: by time, streamed.

A session is its transcript plus sub-agent files written concurrently; item ids are positions in
the merged log, so this order is part of the id scheme and must stay deterministic.
Records go in timestamp order; ties go to the session file, then to agents by id; a record
without a timestamp (or with one older than its file's previous record) keeps its place after
the record before it in its file. Each file's keys therefore never decrease, which is what lets
`heapq.merge` interleave the files lazily: one record per file is held, never a whole file.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sidemirror.sources.claude.positions import MAIN

# (timestamp so far, file rank, index in file, file key, end offset, record): the first three
# are unique per record, so comparisons never reach the record itself.
_Keyed = tuple[str, int, int, str, int, Any]


def merged(streams: Mapping[str, Iterable[tuple[int, Any]]]) -> Iterator[tuple[str, int, Any]]:
    """(file key, end offset of its line, record) for every record of `streams`, in merge order.

    `streams` maps a file key (MAIN for the session file, else the agent id) to its
    (end offset, record) pairs in file order.
    """
    if len(streams) == 1:  # one file: its own order, without a heap or a key per record
        ((key, stream),) = streams.items()
        for end, record in stream:
            yield key, end, record
        return
    ranked = sorted(streams, key=lambda k: (k != MAIN, k))
    keyed = [_keyed(k, rank, streams[k]) for rank, k in enumerate(ranked)]
    for _ts, _rank, _index, key, end, record in heapq.merge(*keyed):
        yield key, end, record


def _keyed(key: str, rank: int, stream: Iterable[tuple[int, Any]]) -> Iterator[_Keyed]:
    ts = ""
    for index, (end, record) in enumerate(stream):
        stamp = record.get("timestamp") if isinstance(record, dict) else None
        ts = stamp if isinstance(stamp, str) and stamp > ts else ts
        yield (ts, rank, index, key, end, record)
