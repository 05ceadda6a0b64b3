"""Helpers every agent's adapter shares: typed reads of drifting JSON, and one-line text.

Agents' record fields are whatever the file says they are. Every adapter reads fields through
these, so a `true` where a list was expected, or a number
where text was, yields an empty value instead of an exception that would drop a whole batch.
"""

from __future__ import annotations

import json
from typing import Any


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def one_line(text: str) -> str:
    """Collapse whitespace runs (newlines included) so a summary is one readable line."""
    return " ".join(text.split())


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def flatten_content(content: Any) -> str:
    """Text of a message or tool_result `content`: a string, or a list of blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else compact_json(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                parts.append(as_text(block.get("text")))
            elif kind == "image":
                parts.append("[image]")
            elif kind == "tool_reference":
                parts.append(as_text(block.get("tool_name")))
            else:
                parts.append(compact_json(block))
    return "\n".join(p for p in parts if p)
