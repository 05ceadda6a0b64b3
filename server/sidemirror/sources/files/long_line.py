"""A JSONL line too long to hold (over the 8 MiB cap) is read in bounded memory, and kept cut.

A 10 MB assistant reply or tool result is one line, and dropping it loses the turn with it: its
record type, ids, timestamps, usage and stop reason come *after* the huge text in the line. So
the line's bytes stream through a small tokenizer that copies the line's shape and every short
value, and keeps only the head of each long string (`HEAD_BYTES` of it, ended at a space so a
secret cut in two cannot show half of itself past redaction). What remains is a small JSON line
that decodes to the record, the long strings ending in a marker that says how many characters
were cut and how big the line was. Adapters parse that record like any other; `mark_cut` then
turns each marker into the item's `truncated`, `full_length` (characters of the original text)
and `line_bytes`.

Characters are counted while streaming, without decoding: UTF-8 continuation bytes are not
characters, an escape (`\\n`, `\\"`) is one, `\\uXXXX` is one, an escaped surrogate pair is one
(Python counts code points; so does `full_length` everywhere). Memory is the shape kept (at most
`KEEP_MAX_BYTES`, else the line is skipped as before), one string head and one read piece (the
tailer reads 256 KiB at a time), whatever the line's size.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from sidemirror.core.jsonline import decode_line
from sidemirror.core.models import TRUNCATED_FIELDS, SessionItem

HEAD_BYTES = 64 * 1024  # of a long string's raw JSON: what an item keeps of a cut text
KEEP_MAX_BYTES = 2 * 1024 * 1024  # the line's shape and short values; more: not recoverable
SPACE_WITHIN = 2048  # the head ends at the last whitespace this close to its end, if any

# Per process, so a line cannot forge one: a marker is made only here and read only by
# `mark_cut` in the same process (items are stored with the marker already turned into fields).
_NONCE = secrets.token_hex(8)
_MARK_START = "\ue000" + _NONCE
# A leading newline ends any `name=value` a redaction rule could otherwise extend into it;
# one_line() may have turned it into a space.
_MARK = re.compile(r"\s?" + _MARK_START + r":(\d+):(\d+)\ue001")
# Stands for the line's size in a marker until the line's end is reached.
_SIZE_SLOT = "\ue002" + _NONCE
_SIZE_SLOT_JSON = json.dumps(_SIZE_SLOT)[1:-1].encode()

_CONTINUATION = bytes(range(0x80, 0xC0))
# Starts with a literal, so the engine skips ahead fast. (Text that spells a backslash and
# "ud83d" right before an escaped low surrogate would count one too few: no encoder writes it.)
_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F]")
_HIGH = re.compile(rb"\\u[dD][89abAB]")
_LOW = re.compile(rb"\\u[dD][c-fC-F]")


def _size_text(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _chars(raw: bytes) -> int:
    """Code points of a JSON string body whose escapes are whole (see `_whole_escapes`)."""
    characters = len(raw.translate(None, _CONTINUATION))
    escapes = raw.count(b"\\") - raw.count(b"\\\\")  # `\\` is one escape of two backslashes
    if b"\\u" in raw:  # \uXXXX is 6 bytes for one character, an escaped pair 12
        characters -= 4 * _u_escapes(raw) + sum(1 for _ in _PAIR.finditer(raw))
    return characters - escapes


def _u_escapes(raw: bytes) -> int:
    """How many `\\u` are escapes: a run of r backslashes before a `u` makes one when r is odd.
    With c_k the runs of at least k (`raw.count` of k backslashes and a `u`: one per such run),
    that is c_1 - c_2 + c_3 - ..., a few counts in C instead of a loop over every escape."""
    total, sign, k = 0, 1, 1
    while count := raw.count(b"\\" * k + b"u"):
        total += sign * count
        sign, k = -sign, k + 1
    return total


def _whole_escapes(raw: bytes) -> int:
    """Where to split `raw` (a string body read so far, starting at an escape boundary) so no
    escape is cut: at the first escape that starts in its last 12 bytes (an escaped surrogate
    pair is 12 bytes), or at the pair whose second half that escape is."""
    first = raw.find(b"\\", max(0, len(raw) - 12))
    if first < 0:
        return len(raw)
    split = _escape_start(raw, first)
    pair = split >= 6 and _LOW.match(raw, split) and _HIGH.match(raw, split - 6)
    if pair and _escape_start(raw, split - 6) == split - 6:
        split -= 6
    return split


def _escape_start(raw: bytes, backslash: int) -> int:
    """The escape that the backslash at `backslash` belongs to: itself, or after an odd run of
    backslashes, the one before it (it is then the second byte of a `\\\\` escape)."""
    run = backslash - len(raw[:backslash].rstrip(b"\\"))
    return backslash - run % 2


def _decode_head(raw: bytes) -> str:
    """The text of a string body's first bytes: the longest prefix that decodes (the cut may
    fall inside an escape or a UTF-8 sequence), ended at a nearby whitespace."""
    text: str | None = None
    for end in range(len(raw), max(-1, len(raw) - 13), -1):
        try:
            text = json.loads(b'"' + raw[:end] + b'"')
            break
        except ValueError:
            continue
    if text is None:
        return ""  # not a valid string: nothing of it is shown
    if text and "\ud800" <= text[-1] <= "\udbff":
        text = text[:-1]  # half of a pair the cut split
    space = max(text.rfind(c, max(0, len(text) - SPACE_WITHIN)) for c in " \n\t")
    return text[: space + 1] if space > 0 else text


class LongLine:
    """One line's bytes in order (`feed`), then the record with its long strings cut (`finish`)."""

    def __init__(self, offset: int) -> None:
        self.offset = offset  # of the line's first byte, for the parse-error detail
        self.size = 0
        self._kept = bytearray()
        self._overflow = False
        self._in_string = False
        self._carry = b""  # the end of the last piece, while it may be part of an escape
        self._raw = bytearray()  # the current string's body, while it is short
        self._head: str | None = None  # set once the current string is known to be long
        self._chars = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        if self._overflow:
            return  # only the size matters now
        if self._carry:
            data, self._carry = self._carry + data, b""
        i = 0
        while i < len(data) and not self._overflow:
            if not self._in_string:
                quote = data.find(b'"', i)
                self._keep(data[i:] if quote < 0 else data[i:quote])
                if quote < 0:
                    return
                self._in_string = True
                i = quote + 1
            else:
                i = self._string(data, i)

    def _string(self, data: bytes, i: int) -> int:
        """Take string body bytes from `i`; returns where the rest of `data` starts."""
        quote = data.find(b'"', i)
        while quote > i and data[quote - 1] == 0x5C and _escaped(data, quote, i):
            quote = data.find(b'"', quote + 1)  # `\"` inside the text: not its end
        if quote < 0:
            cut = i + _whole_escapes(data[i:])
            self._body(data[i:cut])
            self._carry = data[cut:]
            return len(data)
        self._body(data[i:quote])
        self._close()
        return quote + 1

    def _body(self, raw: bytes) -> None:
        self._chars += _chars(raw)
        if self._head is None:
            self._raw += raw
            if len(self._raw) > HEAD_BYTES:
                self._head = _decode_head(bytes(self._raw[:HEAD_BYTES]))
                self._raw = bytearray()

    def _close(self) -> None:
        self._in_string = False
        if self._head is None:
            self._keep(b'"' + self._raw + b'"')
            self._raw.clear()
        else:
            cut = self._chars - len(self._head)
            marker = f"\n{_MARK_START}:{cut}:{_SIZE_SLOT}\ue001"
            self._keep(json.dumps(self._head + marker).encode())
            self._head = None
        self._chars = 0

    def _keep(self, data: bytes) -> None:
        self._kept += data
        if len(self._kept) > KEEP_MAX_BYTES:
            self._overflow = True
            self._kept = bytearray()

    def finish(self) -> tuple[Any, str]:
        """(the record, or None when nothing could be recovered; the reason to report)."""
        size = _size_text(self.size)
        if self._overflow:
            return None, f"line of {size} has too many values to read"
        if self._in_string or self._carry:
            return None, f"line of {size} is not JSON"
        line = bytes(self._kept).replace(_SIZE_SLOT_JSON, str(self.size).encode())
        ok, value = decode_line(line)
        if not ok or value is None:
            return None, f"line of {size} is not JSON"
        return value, f"line of {size} capped"


def _escaped(data: bytes, quote: int, start: int) -> bool:
    """Whether the quote at `quote` is escaped: an odd run of backslashes before it (`start`
    is where this piece of the string begins: escapes are never split across pieces)."""
    run = 0
    while quote - run - 1 >= start and data[quote - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


# --- items ---

# The text field of each item type, and its `truncated` flag (an error has neither flag nor
# `full_length`: its message just loses the marker).
_TEXT_FIELDS: dict[str, tuple[str, str | None]] = {**TRUNCATED_FIELDS, "error": ("message", None)}
_FULL_LENGTH = "full_length"


def mark_cut(items: list[SessionItem]) -> list[SessionItem]:
    """Items whose text came from a cut string: the marker removed, and the item says so
    (`truncated`, `full_length` = the original length in characters, `line_bytes`)."""
    for item in items:
        fields = _TEXT_FIELDS.get(item.type)
        if fields is None:
            continue
        text: str = getattr(item, fields[0])
        if _MARK_START not in text:
            continue
        cut = line_bytes = 0

        def drop(match: re.Match[str]) -> str:
            nonlocal cut, line_bytes
            cut += int(match.group(1))
            line_bytes = max(line_bytes, int(match.group(2)))
            return ""

        shown = _MARK.sub(drop, text)
        setattr(item, fields[0], shown)
        item.line_bytes = line_bytes
        if fields[1] is not None:
            setattr(item, fields[1], True)
            setattr(item, _FULL_LENGTH, len(shown) + cut)
    return items
