"""decode_line's fast path (pydantic-core) gives exactly what the json.loads path gives."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.core.jsonline import decode_line

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "claude"
_LONE = re.compile("[\ud800-\udfff]")


def reference(line: bytes) -> tuple[bool, Any]:
    """The decoder as it was before the fast path: json.loads, lone surrogates scrubbed."""
    if not line.strip():
        return True, None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False, None
    if b"\\ud" in line or b"\\uD" in line:
        value = _scrub(value)
    return True, value


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def same(line: bytes) -> None:
    # repr, not ==: tells -0.0 from 0.0, NaN from NaN, key order, int from float
    assert repr(decode_line(line)) == repr(reference(line)), line[:200]


EDGES = [
    b'{"a":1,"b":2,"a":3}',
    b'"\\ud800"',
    b'{"\\udc00x":"\\ud83d\\ude00"}',
    b'"\xed\xa0\x80"',
    b"\xef\xbb\xbf{}",
    '{"a":"é"}'.encode("utf-16"),
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"NaN",
    b"-Infinity",
    b"-0",
    b"-0.0",
    b"4.9e-324",
    b"12345678901234567890.5",
    b"123456789012345678901234567890",
    b'{"a":"\x01"}',
    b'"\\u0000"',
    b"[1,]",
    b"01",
    b"{} x",
    b"\x0c{}",
    b"   ",
    b"[" * 400 + b"]" * 400,
    b"[" * 999 + b"]" * 999,
    b"[" * 1100 + b"]" * 1100,
]


def test_edge_cases_decode_as_json_loads_does() -> None:
    for line in EDGES:
        same(line)


def test_every_fixture_line_decodes_as_json_loads_does() -> None:
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            same(line)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=())),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values, st.booleans())
def test_random_values_decode_as_json_loads_does(value: Any, ascii_only: bool) -> None:
    same(json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=60) | st.text(max_size=30).map(lambda t: t.encode("utf-8", "replace")))
def test_random_bytes_decode_as_json_loads_does(line: bytes) -> None:
    same(line)
