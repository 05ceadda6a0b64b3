"""Single hostile lines at the tailer: each is skipped and counted, and the lines after it are
still read (a raised exception there would lose the rest of the batch and stall the session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sidemirror.sources.files.tailer import JsonlTailer, decode_line

DEPTH = 100_000
HOSTILE = {
    "deep_array": b"[" * DEPTH + b"]" * DEPTH,
    "deep_object": b'{"a":' * DEPTH + b"1" + b"}" * DEPTH,
    "invalid_utf8": b'{"a":"caf\xc3\x28\xff"}',
    "nul_bytes": b"\x00" * 100,
    "nul_inside": b'{"a":\x001}',
    "lone_surrogate_escape": b'{"a":"\\ud800"}',
    "huge_number": b"1" + b"0" * 100_000,
    "truncated": b'{"type":"user","message":{"content":"unterminated',
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_decode_line_never_raises(name: str) -> None:
    ok, _value = decode_line(HOSTILE[name])
    assert ok in (True, False)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_tailer_skips_a_hostile_line_and_reads_on(tmp_path: Path, name: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n":1}\n' + HOSTILE[name] + b'\n{"n":2}\n')
    batch = JsonlTailer(path).poll()
    values = [v for _end, v in batch.records]
    assert values[0] == {"n": 1} and values[-1] == {"n": 2}
    assert batch.offset == path.stat().st_size


@pytest.mark.parametrize(
    "line",
    [
        b'{"content":"cut \\ud83d here"}',
        b'{"content":["\\udc00", {"k\\ud800": "x"}]}',
        b'{"content":"ok \\ud83d\\ude00 pair"}',
    ],
)
def test_decoded_values_are_always_utf8_encodable(line: bytes) -> None:
    """An escaped lone surrogate is valid JSON but cannot be sent as UTF-8: left in, it made the
    session's snapshot answer 500 and its stream die at every reconnect. It becomes U+FFFD."""
    ok, value = decode_line(line)
    assert ok
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")
    if b"ude00" in line:
        assert "\U0001f600" in text  # a proper pair is kept
