"""A transcript's items as the protocol defines them: a clean parse, numbered by position.

Independent of the server's loading path (no tailer, journal, sync points or live merge), so
tests compare what the server serves against the plain meaning of the file.
"""

from __future__ import annotations

from sidemirror.models import SessionItem
from sidemirror.sources.claude import MAIN, ClaudeParser
from sidemirror.sources.tailer import MAX_LINE_BYTES, decode_line

SLOTS = 65536  # docs/protocol.md: seq = end of the line × 65536 + n


def positional_parse(data: bytes, start: int = 0) -> list[SessionItem]:
    """The items of the complete lines of `data` from byte `start` (bad and oversized lines
    skipped): the n-th item of the line ending at byte `end` has seq `end * SLOTS + n`. A parse
    from `start` > 0 does not count turns, as the server's parse from a sync point does not."""
    parser = ClaudeParser(from_start=start == 0)
    items: list[SessionItem] = []
    end = start
    for line in data[start:].split(b"\n")[:-1]:
        end += len(line) + 1
        if len(line) > MAX_LINE_BYTES:
            continue
        ok, value = decode_line(line)
        if ok and value is not None:
            for n, item in enumerate(parser.feed(value, MAIN), 1):
                item.seq = end * SLOTS + n
                items.append(item)
    return items
