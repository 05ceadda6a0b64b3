"""Reading an ingest journal: its head when the server starts (to index the session without
reading it) and all of it when the session is first read (to rebuild its log).

A journal is a header line (epoch, workspace, session, agent), then one record per line: an item
with its seq, or `{"title": ...}`. Journals written before seqs were stored number their items
1, 2, 3… by position; a record with a seq keeps it, so a line lost in the middle leaves a gap
instead of moving every later item onto another item's id.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sidemirror.core.durable import open_regular, read_whole_lines
from sidemirror.core.models import SESSION_ITEM_ADAPTER, SessionItem

FORMAT = 1
HEAD_BYTES = 8 << 10  # enough for the header, and usually the title and the first item
# An item line starts with its timestamp (the models' field order); a title line is a dict of one.
_ITEM_TS = re.compile(rb'\{"ts":"([^"\\]*)"')
_TITLE = b'{"title"'


@dataclass(frozen=True)
class Header:
    epoch: str
    directory: str
    session: str
    agent: str

    def line(self) -> bytes:
        record = {
            "sidemirror_journal": FORMAT,
            "epoch": self.epoch,
            "workspace": self.directory,
            "session": self.session,
            "agent": self.agent,
        }
        return json.dumps(record).encode("utf-8") + b"\n"


def parse_header(line: bytes) -> Header | None:
    try:
        h = json.loads(line)
        return Header(str(h["epoch"]), str(h["workspace"]), str(h["session"]), str(h["agent"]))
    except (ValueError, KeyError, TypeError):
        return None


def item_line(item: SessionItem) -> bytes:
    return item.model_dump_json(exclude={"id"}).encode("utf-8") + b"\n"


def title_line(title: str) -> bytes:
    return json.dumps({"title": title}).encode("utf-8") + b"\n"


@dataclass
class Head:
    """What indexing keeps of a journal: its header, and what its first bytes tell."""

    header: Header
    title: str | None
    started_at: str | None
    mtime: float


def read_head(path: str) -> Head | None:
    """The journal's header (None when it has none) from its first bytes only. Only a title
    line is decoded: indexing 10,000 sessions must cost next to nothing."""
    fd = open_regular(path)
    try:
        data = os.read(fd, HEAD_BYTES)
        mtime = os.fstat(fd).st_mtime
    finally:
        os.close(fd)
    lines = data.split(b"\n")[:-1]  # whole lines only
    header = parse_header(lines[0]) if lines else None
    if header is None:
        return None
    title: str | None = None
    started_at: str | None = None
    for raw in lines[1:]:
        if raw.startswith(_TITLE):
            record = _json(raw)
            title = str(record["title"]) if record and "title" in record else title
        elif started_at is None and (ts := _ITEM_TS.match(raw)) is not None:
            started_at = ts.group(1).decode("utf-8", "replace") or None
    return Head(header, title, started_at, mtime)


@dataclass
class Replay:
    """A journal read whole: what its log holds, and whether it is intact."""

    header: Header
    end: int  # bytes of whole lines (a torn last line is cut)
    items: list[SessionItem] = field(default_factory=list)
    title: str | None = None
    unreadable: int = 0
    # A whole line could not be read, or its seq did not follow: an acknowledged item may be
    # lost, so the log must start over under a new epoch (ids already handed out stay unique).
    damaged: bool = False


def replay(path: str | Path) -> Replay | None:
    """Every record of the journal (None when it has no valid header)."""
    data = read_whole_lines(path)
    lines = data.split(b"\n")[:-1]
    header = parse_header(lines[0]) if lines else None
    if header is None:
        return None
    out = Replay(header, len(data))
    last = 0
    for raw in lines[1:]:
        record = _json(raw)
        if record is not None and "type" not in record and "title" in record:
            out.title = str(record["title"])
            continue
        try:
            item = SESSION_ITEM_ADAPTER.validate_python(record)
        except (ValidationError, ValueError, TypeError):
            out.unreadable += 1
            out.damaged = True
            continue
        stored_seq = record.get("seq") if isinstance(record, dict) else None
        if stored_seq is None:
            item.seq = last + 1  # written before seqs were stored: numbered by position
        elif not isinstance(stored_seq, int) or stored_seq <= last:
            out.damaged = True
            continue
        last = item.seq
        out.items.append(item)
    return out


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
