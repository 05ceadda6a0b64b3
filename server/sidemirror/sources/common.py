"""Typed reads of drifting JSON: agents' record fields are whatever the file says they are.

Every adapter reads fields through these, so a `true` where a list was expected, or a number
where text was, yields an empty value instead of an exception that would drop a whole batch.
"""

from __future__ import annotations

from typing import Any


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
