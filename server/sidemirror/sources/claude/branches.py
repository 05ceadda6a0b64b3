"""Rewinds in a Claude Code transcript: where the conversation branched, and what it left behind.

Every main-thread record carries `uuid` and `parentUuid`, and in a straight conversation each
record's parent is the record written just before it (tool results hanging off parallel tool
calls make side branches, but a *prompt* always continues from the latest record). When the user
rewinds (restores a checkpoint), Claude Code keeps the old lines and writes the next prompt with
its `parentUuid` pointing back at an earlier record: the lines written since that record are the
abandoned branch. So a real prompt whose parent is not the latest record is a rewind to that
parent. Checked on every recorded transcript we hold (versions 1.0 to 2.1): no straight
conversation has a prompt that does not continue from the latest record.

The abandoned part is everything written after the branch point, whatever its kind; it is named
by seqs (positions.py), which increase along the file, so "after the branch point's line and
before the rewind line" is exactly the abandoned items, sub-agent items included. A compaction
(`compact_boundary`, `parentUuid` null) continues from the latest record of the branch in use,
so it keeps that branch and is not a rewind. A prompt with no parent mid-file is not taken for one
either (see `rewind`).
"""

from __future__ import annotations

from array import array
from typing import Any

from sidemirror.core.models import SystemEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.positions import last_seq_of_line
from sidemirror.sources.common import as_dict, flatten_content, one_line
from sidemirror.sources.common import as_text as _text

LABEL_CHARS = 100
NO_END = -1
NO_LABEL = -1


class BranchTracker:
    """The latest main-thread record, and enough about earlier ones to name a branch point.

    It holds a row for every main-thread record of a file that may be followed for hours, so a
    row is 20 bytes in arrays, not the record's uuid string as a
    dict key (about 165): the lookups (a rewind's parent, a summary's leaf) are rare, and a
    C-level scan of an array of hashes is fast enough for them. `hash()` of a str is stable
    within the process, which is all the rows live for; two of 100,000 uuids share a 64-bit
    hash with odds of about 1 in 10**9."""

    def __init__(self) -> None:
        self.leaf: str | None = None  # uuid of the latest main-thread record
        self._keys = array("q")  # hash(uuid) of each record with an end or a label
        self._ends = array("q")  # byte offset just past its line, NO_END when unknown
        self._label_at = array("i")  # which label names it, NO_LABEL when none
        # Each label once, UTF-8 end to end in one buffer (a str with a "…" takes 2-4 bytes a
        # character, plus its object header): label i is _text_bytes[_text_starts[i]:next].
        self._text_bytes = bytearray()
        self._text_starts = array("q")
        self._last_label: str | None = None

    def note(self, record: dict[str, Any], end: int | None) -> None:
        """Called for every main-thread record after it is parsed."""
        uuid = _text(record.get("uuid"))
        if not uuid:
            return
        self.leaf = uuid
        label = _label(record)
        if label and label != self._last_label:
            self._last_label = label
            self._text_starts.append(len(self._text_bytes))
            self._text_bytes += label.encode()
        # A tool result or progress line is named by the message before it.
        label_at = len(self._text_starts) - 1 if self._last_label else NO_LABEL
        if end is None and label_at == NO_LABEL:
            return
        self._keys.append(hash(uuid))
        self._ends.append(NO_END if end is None else end)
        self._label_at.append(label_at)

    def has(self, uuid: str) -> bool:
        """Whether a main-thread record with this uuid was read (with its end, or a label)."""
        return uuid == self.leaf or hash(uuid) in self._keys

    def _rows(self, uuid: str) -> list[int]:
        """The rows of a uuid, oldest first (a file can repeat a record, e.g. on resume)."""
        key, start = hash(uuid), 0
        rows: list[int] = []
        while True:
            try:
                start = self._keys.index(key, start)
            except ValueError:
                return rows
            rows.append(start)
            start += 1

    def _end_of(self, rows: list[int]) -> int | None:
        ends = [self._ends[r] for r in rows if self._ends[r] != NO_END]
        return ends[-1] if ends else None  # the latest line with that uuid, as a dict kept it

    def _label_of(self, rows: list[int]) -> str | None:
        labels = [self._label_at[r] for r in rows if self._label_at[r] != NO_LABEL]
        if not labels:
            return None
        at = labels[-1]
        stop = self._text_starts[at + 1] if at + 1 < len(self._text_starts) else None
        return self._text_bytes[self._text_starts[at] : stop].decode()

    def rewind(self, record: dict[str, Any], ts: str) -> SystemEvent | None:
        """The `rewind` line for a prompt that does not continue from the latest record."""
        if self.leaf is None or "parentUuid" not in record:
            return None  # nothing read before it (a first prompt, or a parse from a sync point)
        parent = record.get("parentUuid")
        if not isinstance(parent, str) or parent == self.leaf:
            # No parent mid-file is not taken for a rewind: files made of several runs of a
            # session (tests, tools that join transcripts) start each run that way, and folding
            # everything before it would hide a whole history on a guess.
            return None
        rows = self._rows(parent)
        label = self._label_of(rows) or "an earlier message"
        end = self._end_of(rows)
        # A parent we never read is before the part read (a parse from a sync point): all of
        # that part was written after it, so all of it was abandoned.
        after = last_seq_of_line(end) if end is not None else 0
        return SystemEvent(
            ts=ts,
            subtype="rewind",
            content=redact_text(f"Rewound to: {label}"),
            abandoned_after=after,
        )


def _label(record: dict[str, Any]) -> str:
    """A prompt's or a reply's text, on one line; empty for tool traffic and bookkeeping."""
    message = as_dict(record.get("message"))
    content = message.get("content")
    if record.get("type") == "user":
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return ""
        if record.get("isMeta") is True:
            return ""
    elif record.get("type") == "assistant":
        if isinstance(content, list):
            content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    else:
        return ""
    text = one_line(flatten_content(content))
    return text[:LABEL_CHARS] + ("…" if len(text) > LABEL_CHARS else "")
