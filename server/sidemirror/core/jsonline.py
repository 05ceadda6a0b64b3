"""Decoding one JSON line from an untrusted source (transcripts, rollouts, ingest bodies).

Shared by the file tailers and the ingest endpoints so that both treat hostile lines alike: a
line that is not JSON, is nested deeper than the parser allows, or carries an escaped lone
surrogate (valid JSON, but not encodable as UTF-8, so it would break every response carrying it)
is handled here, once.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic_core import from_json


def decode_line(line: bytes) -> tuple[bool, Any]:
    """(ok, value) for one line; blank lines are (True, None): whitespace is not an error."""
    if not line.strip():
        return True, None
    try:
        # pydantic-core's parser (already a dependency) is ~2.5x faster than json.loads on
        # transcript lines. It rejects everything json.loads would (and more: lone surrogates,
        # a BOM, UTF-16, very deep nesting), so any failure falls back to json.loads, which
        # keeps the final say: the values are the same either way
        # (tests/unit/core/test_jsonline.py).
        return True, from_json(line)
    except (ValueError, RecursionError):
        pass
    try:
        value = json.loads(line)
        if b"\\ud" in line or b"\\uD" in line:
            # An escaped lone surrogate is valid JSON but not encodable as UTF-8 (it would break
            # every response that carries it): it becomes U+FFFD. Proper pairs are already joined.
            value = _scrub_surrogates(value)
        return True, value
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError; deep nesting
        return False, None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrub_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_scrub_surrogates(k): _scrub_surrogates(v) for k, v in value.items()}
    return value
