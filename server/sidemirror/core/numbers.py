"""Numbers read from text a client or a file name gave: ASCII digits only.

`str.isdigit()` is true for "²" and "٣", which `int()` then refuses or reads as another number;
every parser of outside input goes through `parse_count` instead.
"""

from __future__ import annotations


def parse_count(text: str) -> int | None:
    """The non-negative integer written in ASCII digits, or None for anything else."""
    if not text or not text.isascii() or not text.isdigit():
        return None
    return int(text)
