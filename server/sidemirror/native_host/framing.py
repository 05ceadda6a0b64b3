"""Chrome's native messaging framing: each message is a 4-byte length in the machine's byte
order, then that many bytes of UTF-8 JSON, on stdin (from Chrome) and stdout (to Chrome)."""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

_LENGTH = struct.Struct("=I")  # native byte order, as Chrome writes it
# Chrome sends at most 4 GB, but a pairing request is a few bytes: refuse anything large.
MAX_IN = 64 << 10
MAX_OUT = 1 << 20  # Chrome's own limit on a host's message


class FramingError(Exception):
    """A message that is cut short, too long or not a JSON object."""


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message, or None at a clean end of input (Chrome closed the pipe)."""
    head = stream.read(_LENGTH.size)
    if not head:
        return None
    if len(head) < _LENGTH.size:
        raise FramingError("the length prefix was cut short")
    (length,) = _LENGTH.unpack(head)
    if length > MAX_IN:
        raise FramingError(f"a message of {length} bytes is more than {MAX_IN}")
    body = stream.read(length)
    if len(body) < length:
        raise FramingError("the message was cut short")
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FramingError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FramingError("a message must be a JSON object")
    return message


def encode_message(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_OUT:
        raise FramingError(f"a reply of {len(body)} bytes is more than Chrome takes")
    return _LENGTH.pack(len(body)) + body


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(encode_message(message))
    stream.flush()
