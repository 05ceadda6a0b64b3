"""Cut long text for display without breaking a user-perceived character.

Items in the session stream are capped (default 500 characters, `--max-chars`). A naive
``text[:n]`` can split an emoji ZWJ family, a flag, a base letter from its combining
accent or a UTF-16 surrogate pair, which renders as tofu in the side panel. We cut on
an extended grapheme cluster boundary instead.

Segmenting a multi-megabyte tool output just to cut it at 500 characters would be
wasteful, so only a small region before the cut is segmented. That region must start
at a position that is certainly a cluster boundary; see ``_SYNC_POINT``.
"""

from __future__ import annotations

import regex

ELLIPSIS = "\u2026"

_CLUSTER = regex.compile(r"\X")

# A "sync point" is a position p where a break between text[p-1] and text[p] follows
# from those two characters alone, so it is a true cluster boundary whatever came
# before. The only grapheme rules that look further back are GB9c (Indic linkers:
# the left character is Extend/ZWJ), GB11 (emoji ZWJ sequences: the left character is
# ZWJ) and GB12/13 (regional-indicator pairs: the left character is RI). Excluding
# those on the left, plus every class that may bind to its neighbour (Prepend, CR and
# Hangul L on the left; Extend, ZWJ, SpacingMark and Hangul V/T on the right), leaves
# pairs that always break. Surrogate halves are excluded so a pair is never split.
# ``(?r)`` makes the search run backwards from the cut, so it stops at the nearest
# sync point, which for ordinary text is a few characters away.
_SYNC_POINT = regex.compile(
    r"(?r)"
    r"(?<=[^\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=Regional_Indicator}\p{GCB=Prepend}"
    r"\p{GCB=CR}\p{GCB=L}\p{Cs}])"
    r"(?=[^\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=V}\p{GCB=T}\p{Cs}])"
)


def _is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _is_low_surrogate(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def _last_boundary_at_or_before(text: str, limit: int) -> int:
    """Return the largest grapheme-cluster boundary ``<= limit`` (0 < limit < len)."""
    # endpos=limit+1 lets the look-ahead see text[limit], so ``limit`` itself counts.
    sync = _SYNC_POINT.search(text, 1, limit + 1)
    start = sync.start() if sync is not None else 0
    boundary = start
    # Segment forward from the sync point only until we pass the limit.
    for match in _CLUSTER.finditer(text, start):
        end = match.end()
        if end > limit:
            break
        boundary = end
    # \X treats each surrogate code point as its own cluster (they are Control), so a
    # pair that arrived as two code points needs an explicit guard.
    if (
        0 < boundary < len(text)
        and _is_high_surrogate(text[boundary - 1])
        and _is_low_surrogate(text[boundary])
    ):
        boundary -= 1
    return boundary


def truncate(text: str, max_chars: int) -> tuple[str, bool, int]:
    """Return ``(shown_text, truncated, full_length)``.

    ``full_length`` is ``len(text)`` in code points. Text that fits is returned as is.
    Otherwise the result is whole grapheme clusters followed by ``…`` and is at most
    ``max_chars`` code points long (just ``…`` when the first cluster does not fit).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars!r}")
    full_length = len(text)
    if full_length <= max_chars:
        return text, False, full_length
    budget = max_chars - 1  # one code point is reserved for the ellipsis
    if budget == 0:
        return ELLIPSIS, True, full_length
    cut = _last_boundary_at_or_before(text, budget)
    return text[:cut] + ELLIPSIS, True, full_length
