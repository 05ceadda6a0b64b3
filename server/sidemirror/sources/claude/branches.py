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
from sidemirror.core.recent import RecentDict
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.positions import last_seq_of_line
from sidemirror.sources.claude.tools import has_tool_result
from sidemirror.sources.common import as_dict, flatten_content, one_line
from sidemirror.sources.common import as_text as _text

LABEL_CHARS = 100
NO_END = -1
NO_LABEL = -1
# The latest records, each findable (a rewind to one in the middle of a turn, a summary naming
# the leaf just read). Older ones are findable only as branch points (`BranchTracker`).
RECENT_RECORDS = 256


class BranchTracker:
    """The latest main-thread record, and enough about earlier ones to name a branch point.

    A rewind restores the conversation to just before an earlier prompt, so the new prompt's
    parent is that prompt's parent: the record that was the latest when it was written. Those
    records, one a turn, are the branch points kept for the whole file, as compact rows (20 bytes
    in arrays, and the label text of each once, in one buffer); the latest `RECENT_RECORDS`
    records are kept too, whatever they are. A row for every record, for a file followed for
    hours at tens of lines a second, grew by ~80 bytes a line that were never freed (issue 34).
    The lookups (a rewind's parent, a summary's leaf) are rare, and a C-level scan of an array of
    hashes is fast enough for them. `hash()` of a str is stable within the process, which is all
    the rows live for; two of 100,000 uuids share a 64-bit hash with odds of about 1 in 10**9."""

    def __init__(self) -> None:
        self.leaf: str | None = None  # uuid of the latest main-thread record
        self._last_label: str | None = None  # the latest prompt's or reply's text
        # hash(uuid) -> (byte offset just past its line or NO_END, the label naming it)
        self._recent: RecentDict[int, tuple[int, str | None]] = RecentDict(RECENT_RECORDS)
        self._forgot = False  # whether a record fell out of `_recent`
        self._keys = array("q")  # hash(uuid) of each branch point
        self._ends = array("q")  # byte offset just past its line, NO_END when unknown
        self._label_at = array("i")  # which label names it, NO_LABEL when none
        # Each label once, UTF-8 end to end in one buffer (a str with a "…" takes 2-4 bytes a
        # character, plus its object header): label i is _text_bytes[_text_starts[i]:next].
        self._text_bytes = bytearray()
        self._text_starts = array("q")
        self._stored_label: str | None = None  # the label put last in the buffer

    def note(self, record: dict[str, Any], end: int | None) -> None:
        """Called for every main-thread record after it is parsed."""
        uuid = _text(record.get("uuid"))
        if not uuid:
            return
        if self.leaf is not None and _may_open_turn(record):
            self._keep_branch_point(self.leaf)
        self.leaf = uuid
        label = _label(record)
        if label:
            self._last_label = label
        # A tool result or progress line is named by the message before it.
        if len(self._recent) >= RECENT_RECORDS:
            self._forgot = True
        self._recent[hash(uuid)] = (NO_END if end is None else end, self._last_label)

    def _keep_branch_point(self, uuid: str) -> None:
        end, label = self._recent.get(hash(uuid), (NO_END, None))
        if label and label != self._stored_label:
            self._stored_label = label
            self._text_starts.append(len(self._text_bytes))
            self._text_bytes += label.encode()
        label_at = len(self._text_starts) - 1 if label else NO_LABEL
        if end == NO_END and label_at == NO_LABEL:
            return
        self._keys.append(hash(uuid))
        self._ends.append(end)
        self._label_at.append(label_at)

    def has(self, uuid: str) -> bool:
        """Whether this uuid is a main-thread record read lately, or a branch point."""
        key = hash(uuid)
        return uuid == self.leaf or key in self._recent or key in self._keys

    def _find(self, uuid: str) -> tuple[int | None, str | None] | None:
        """(end, label) of a record read, None when it is neither recent nor a branch point."""
        key = hash(uuid)
        if key in self._recent:
            end, label = self._recent[key]
            return (None if end == NO_END else end), label
        rows: list[int] = []
        start = 0
        while True:  # a file can repeat a record (e.g. on resume): the latest row wins
            try:
                start = self._keys.index(key, start)
            except ValueError:
                break
            rows.append(start)
            start += 1
        if not rows:
            return None
        ends = [self._ends[r] for r in rows if self._ends[r] != NO_END]
        labels = [self._label_at[r] for r in rows if self._label_at[r] != NO_LABEL]
        return (ends[-1] if ends else None), (self._label_text(labels[-1]) if labels else None)

    def _label_text(self, at: int) -> str:
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
        found = self._find(parent)
        if found is None and self._forgot:
            # Read, maybe, and forgotten (a record in the middle of an old turn): folding from
            # the start of the part read would hide what was kept, so both branches stay shown.
            return None
        end, label = found if found is not None else (None, None)
        # A parent we never read is before the part read (a parse from a sync point): all of
        # that part was written after it, so all of it was abandoned.
        after = last_seq_of_line(end) if end is not None else 0
        return SystemEvent(
            ts=ts,
            subtype="rewind",
            content=redact_text(f"Rewound to: {label or 'an earlier message'}"),
            abandoned_after=after,
        )


def _may_open_turn(record: dict[str, Any]) -> bool:
    """A `user` line that is not a tool's result: a prompt (or an interruption, a command), whose
    parent is a branch point a later rewind may return to. Taking a few too many costs a row."""
    if record.get("type") != "user":
        return False
    return not has_tool_result(as_dict(record.get("message")).get("content"))


def _label(record: dict[str, Any]) -> str:
    """A prompt's or a reply's text, on one line; empty for tool traffic and bookkeeping."""
    message = as_dict(record.get("message"))
    content = message.get("content")
    if record.get("type") == "user":
        if has_tool_result(content) or record.get("isMeta") is True:
            return ""
    elif record.get("type") == "assistant":
        if isinstance(content, list):
            content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
    else:
        return ""
    text = one_line(flatten_content(content))
    return text[:LABEL_CHARS] + ("…" if len(text) > LABEL_CHARS else "")
