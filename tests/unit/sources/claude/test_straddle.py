"""Finding a tool call made before the point a parse starts from (straddle.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sidemirror.sources.claude import straddle
from sidemirror.sources.claude.straddle import EarlierCalls


def call_line(tool_id: str, name: str, ts: str, **extra: object) -> bytes:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    record = {"type": "assistant", "timestamp": ts, "message": {"content": [block]}, **extra}
    return json.dumps(record).encode() + b"\n"


def test_a_call_is_found_by_its_id_and_only_a_main_thread_call(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    mention = json.dumps({"type": "user", "message": {"content": 'see "toolu_A" above'}})
    data = (
        call_line("toolu_A", "Bash", "2026-01-01T00:00:01Z")
        + call_line("toolu_B", "Read", "2026-01-01T00:00:02Z", isSidechain=True)
        + mention.encode()
        + b"\n"
    )
    path.write_bytes(data + call_line("toolu_C", "Edit", "2026-01-01T00:00:03Z"))
    calls = EarlierCalls(path, len(data))
    # A text quoting the id (its quotes escaped in JSON) is not taken for the call.
    assert calls("toolu_A") == ("Bash", "2026-01-01T00:00:01Z")
    assert calls("toolu_B") is None  # a sub-agent's call is not the main thread's
    assert calls("toolu_C") is None  # after the start: not looked at
    assert calls("toolu_missing") is None


def test_a_call_further_back_than_the_look_back_is_left_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(straddle, "LOOK_BACK_BYTES", 200)
    path = tmp_path / "t.jsonl"
    filler = json.dumps({"type": "user", "message": {"content": "x" * 300}}).encode() + b"\n"
    data = call_line("toolu_A", "Bash", "2026-01-01T00:00:01Z") + filler
    path.write_bytes(data)
    assert EarlierCalls(path, len(data))("toolu_A") is None
