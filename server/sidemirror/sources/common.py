"""Helpers every agent's adapter shares: typed reads of drifting JSON, and one-line text.

Agents' record fields are whatever the file says they are. Every adapter reads fields through
these, so a `true` where a list was expected, or a number
where text was, yields an empty value instead of an exception that would drop a whole batch.
"""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.models import Attachment

# Block types that carry media, not text: shown as chips (`attachments`), never as words.
MEDIA_BLOCKS = frozenset({"image", "audio"})


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
    """Text of a message or tool_result `content`: a string, or a list of blocks. Images are not
    text: `attachments` lists them, so no "[image]" placeholder runs into the words around it."""
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
            elif kind in ("image", "audio"):
                continue  # media, not text: see `attachments`
            elif kind == "tool_reference":
                parts.append(as_text(block.get("tool_name")))
            else:
                parts.append(compact_json(block))
    return "\n".join(p for p in parts if p)


def attachments(content: Any) -> list[Attachment]:
    """The images (and audio) in `content` (one block or a list), in either shape agents use:
    Anthropic's `{"type": "image", "source": {"media_type", "data"}}` or MCP/ACP's
    `{"type": "image", "mimeType", "data", "uri"}`. Only the type and size are kept."""
    blocks = content if isinstance(content, list) else [content]
    out: list[Attachment] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str) or kind not in MEDIA_BLOCKS:
            continue
        source = as_dict(block.get("source"))
        media_type = as_text(block.get("mimeType")) or as_text(source.get("media_type"))
        data = as_text(block.get("data")) or as_text(source.get("data"))
        fallback = f"{kind}/*"
        out.append(Attachment(media_type=media_type or fallback, size=decoded_size(data)))
    return out


def decoded_size(data: str) -> int | None:
    """Bytes that base64 `data` decodes to, counted without decoding it; None for no data."""
    if not data:
        return None
    stripped = data.strip()
    return max(0, len(stripped) * 3 // 4 - stripped[-2:].count("="))
