"""A transcript's items as the protocol defines them: a clean parse, numbered by position.

Independent of the server's loading path (no tailer, journal, sync points or live merge), so
tests compare what the server serves against the plain meaning of the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sidemirror.core.models import SessionItem
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.claude.positions import MAIN
from sidemirror.sources.files.long_line import LongLine, mark_cut
from sidemirror.sources.files.tailer import MAX_LINE_BYTES, decode_line

SLOTS = 65536  # docs/protocol.md: seq = end of the line × 65536 + n


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON records of a recorded JSONL file, blank lines skipped."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def positional_parse(data: bytes, start: int = 0) -> list[SessionItem]:
    """The items of the complete lines of `data` from byte `start` (bad lines skipped, lines
    over the cap read cut as docs/protocol.md's `line_bytes` says): the n-th item of the line
    ending at byte `end` has seq `end * SLOTS + n`. A parse from `start` > 0 does not count
    turns, as the server's parse from a sync point does not."""
    parser = ClaudeParser(from_start=start == 0)
    items: list[SessionItem] = []
    end = start
    for line in data[start:].split(b"\n")[:-1]:
        end += len(line) + 1
        if len(line) > MAX_LINE_BYTES:
            capped = LongLine(end - len(line) - 1)
            capped.feed(line)
            ok, value = True, capped.finish()[0]
        else:
            ok, value = decode_line(line)
        if ok and isinstance(value, dict):
            for n, item in enumerate(mark_cut(parser.feed(value, MAIN, end)), 1):
                item.seq = end * SLOTS + n
                items.append(item)
    return items


_UUID = re.compile(rb'"([0-9a-f]{8})(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')
_IDS = re.compile(rb'"(toolu_|msg_|req_)')


def rerun(data: bytes, n: int, keep: str) -> bytes:
    """A session's lines as its n-th run would write them: new tool, message and record ids
    (an id seen twice would mean the same call to the parser); the uuid `keep` (the session
    id: one growing transcript) stays."""
    tag = f"{n:04x}".encode()
    data = _IDS.sub(rb'"\1' + tag, data)
    return _UUID.sub(lambda m: m.group(0) if m.group(0)[1:-1].decode() == keep else
                     b'"' + tag + m.group(1)[4:] + m.group(2) + b'"', data)  # fmt: skip


def write_long_session(path: Path, session: Path, size: int) -> None:
    """`path`: the real transcript `session` run again and again until it has `size` bytes."""
    base = session.read_bytes()
    with open(path, "wb") as fh:
        n = 0
        while fh.tell() < size:
            fh.write(base if n == 0 else rerun(base, n, session.stem))
            n += 1
