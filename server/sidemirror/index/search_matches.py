"""Where the query matched in a hit's snippet, for highlighting.

The index's `snippet()` wraps each matched token in two control characters (`OPEN`, `CLOSE`).
They are taken out here, and each span's place kept; the clean snippet is then redacted and cut
like any other text, and the spans that survive are given in UTF-16 code units (what a
JavaScript string's indexes count: an emoji is two). Nothing here depends on the query's
syntax: FTS5 says what matched.
"""

from __future__ import annotations

from sidemirror.core.redact import redact_text
from sidemirror.core.truncate import truncate

OPEN = "\x02"
CLOSE = "\x03"

Span = tuple[int, int]


def unmark(marked: str) -> tuple[str, list[Span]]:
    """The snippet without its marks, and each marked span as (start, end) code points. Marks
    that do not pair up (the item's own text held such a character) give no spans."""
    out: list[str] = []
    spans: list[Span] = []
    start: int | None = None
    paired = True
    for ch in marked:
        if ch == OPEN:
            paired = paired and start is None
            start = len(out)
        elif ch == CLOSE:
            if start is None:
                paired = False
            else:
                spans.append((start, len(out)))
                start = None
        else:
            out.append(ch)
    return "".join(out), (spans if paired and start is None else [])


def _utf16(text: str, index: int) -> int:
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def shown(marked: str, max_chars: int) -> tuple[str, list[list[int]]]:
    """The snippet as shown (redacted, cut to `max_chars`) and its matches as [start, end)
    UTF-16 offsets into it. If redaction changed the snippet (the index holds redacted text,
    so it should not), the spans no longer say where the words are: none are given."""
    text, spans = unmark(marked)
    redacted = redact_text(text)
    if redacted != text:
        spans = []
    cut, was_cut, _n = truncate(redacted, max_chars)
    visible = len(cut) - 1 if was_cut else len(cut)  # the ellipsis is not the item's text
    matches = [
        [_utf16(cut, start), _utf16(cut, min(end, visible))]
        for start, end in spans
        if start < visible and end > start
    ]
    return cut, matches
