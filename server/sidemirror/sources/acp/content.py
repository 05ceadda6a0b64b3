"""ACP content blocks as text and attachments, and terminal bytes as text."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from sidemirror.core.models import Attachment
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import attachments


def block_text(content: Any) -> str:
    """Text of an ACP content block, or of a list of them (prompts, v2 whole messages). Images
    and audio are not text: `block_attachments` lists them."""
    if isinstance(content, list):
        return "\n".join(t for t in (block_text(b) for b in content) if t)
    block = _dict(content)
    kind = block.get("type")
    if kind == "text":
        return _text(block.get("text"))
    if kind == "resource_link":
        return f"[{_text(block.get('name')) or _text(block.get('uri'))}]"
    if kind == "resource":
        resource = _dict(block.get("resource"))
        return _text(resource.get("text")) or f"[{_text(resource.get('uri'))}]"
    return ""


def block_attachments(content: Any) -> list[Attachment]:
    return attachments(content)


def b64_text(data: str) -> str:
    """Base64 terminal bytes as text (invalid UTF-8 replaced); `data` itself if not base64."""
    try:
        return base64.b64decode(data, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return data
