"""Lines over the cap are read in pieces and kept cut: the record's shape and short values come
through whole, a long string keeps its head, and its items carry `truncated`, `full_length`
(characters of the original text, counted while streaming) and `line_bytes`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.core.jsonline import decode_line
from sidemirror.core.models import AssistantEvent, ToolResultEvent, TurnCompleteEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files import long_line
from sidemirror.sources.files.long_line import LongLine, mark_cut
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

from tests.harness.paths import FIXTURES

INIT = FIXTURES / "claude" / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
ROLLOUT = next((FIXTURES / "codex").glob("rollout-*.jsonl"))


def read_cut(line: bytes, pieces: list[int] | None = None) -> tuple[Any, str]:
    reader = LongLine(0)
    pos = 0
    for n in pieces or [len(line)]:
        reader.feed(line[pos : pos + n])
        pos += n
    reader.feed(line[pos:])
    return reader.finish()


TEXT = st.text(
    st.sampled_from(["a", " ", "\n", '"', "\\", "é", "中", "😀", "\x1b", "\t", "/", "u", "\ud800"]),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, ascii_only=st.booleans(), pieces=st.lists(st.integers(1, 50), max_size=40))
def test_any_text_split_anywhere_is_counted_exactly(
    text: str, ascii_only: bool, pieces: list[int]
) -> None:
    """Escapes, UTF-8 sequences and surrogate pairs split across reads: the count is what
    json.loads gives, and the head is the start of the text."""
    record = {"type": "x", "text": text, "after": [1, {"k": "v"}], "uuid": "u-1"}
    line = json.dumps(record, ensure_ascii=True if "\ud800" in text else ascii_only).encode()
    original = json.loads(line)["text"]
    old, long_line.HEAD_BYTES = long_line.HEAD_BYTES, 40
    try:
        value, reason = read_cut(line, pieces)
    finally:
        long_line.HEAD_BYTES = old
    assert reason == "line of 0.0 MB capped"
    assert value["after"] == [1, {"k": "v"}] and value["uuid"] == "u-1"
    (item,) = mark_cut([AssistantEvent(content=value["text"])])
    if item.line_bytes is None:  # short enough to keep whole (a lone surrogate as U+FFFD)
        assert not item.truncated and item.content == decode_line(line)[1]["text"]
        return
    assert item.truncated and item.line_bytes == len(line)
    assert item.full_length == len(original)
    shown = item.content
    assert original.startswith(shown) or "\ufffd" in shown  # a lone surrogate reads as U+FFFD


def test_nothing_but_a_head_is_kept_of_a_10_mb_string() -> None:
    text = "word " * 2_000_000
    line = json.dumps({"type": "x", "text": text, "tail": "kept"}).encode()
    value, reason = read_cut(line, [1 << 20] * 10)
    assert reason == "line of 10.0 MB capped" and value["tail"] == "kept"
    (item,) = mark_cut([AssistantEvent(content=value["text"])])
    assert item.full_length == 10_000_000 and item.line_bytes == len(line)
    assert 60_000 < len(item.content) <= long_line.HEAD_BYTES and text.startswith(item.content)
    assert item.content.endswith(" ")  # ended at a space, never inside a word


def test_a_secret_the_cut_falls_in_never_shows_in_part() -> None:
    """Redaction needs the whole token: the head ends at the space before it."""
    token = "ghp_" + "A1b2C3d4" * 5
    text = "x " * ((long_line.HEAD_BYTES - 20) // 2) + token + " tail" * 10
    value, _ = read_cut(json.dumps({"text": text}).encode())
    (item,) = mark_cut([AssistantEvent(content=redact_text(value["text"]))])
    assert item.truncated and "ghp_" not in item.content
    assert item.full_length == len(text)


def test_what_cannot_be_recovered_is_said() -> None:
    many = json.dumps({"values": list(range(1_000_000))}).encode()
    assert read_cut(many) == (None, f"line of {len(many) / 1e6:.1f} MB has too many values to read")
    unclosed = b'{"text": "' + b"x" * 100_000
    assert read_cut(unclosed) == (None, "line of 0.1 MB is not JSON")
    assert read_cut(b"[" + b"1," * 50_000) == (None, "line of 0.1 MB is not JSON")


def test_a_forged_marker_in_the_text_is_not_read_as_one() -> None:
    (item,) = mark_cut([AssistantEvent(content="\ue000abc:1:2\ue001 \ue000 plain")])
    assert item.line_bytes is None and not item.truncated


def _enlarge(line: bytes, path: list[str | int], size: int) -> bytes:
    record = json.loads(line)
    holder = record
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += " filler" * ((size - len(line)) // 7)
    return json.dumps(record, ensure_ascii=False).encode()


def test_a_real_claude_turn_with_huge_lines_closes_with_its_cost(tmp_path: Path) -> None:
    """The init session's tool result grown to 9.6 MB and its final reply to 10 MB, read by the
    tailer with a small cap: every item is there, cut ones say so, the turn closes as before."""
    lines = INIT.read_bytes().splitlines()
    big = list(lines)
    big[20] = _enlarge(lines[20], ["message", "content", 0, "content"], 9_600_000)
    big[28] = _enlarge(lines[28], ["message", "content", 0, "text"], 10_000_000)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(big) + b"\n")
    tailer = JsonlTailer(path, objects_only=True)
    batch = tailer.poll()
    assert [(p.offset, p.reason) for p in batch.problems] == [
        (sum(len(x) + 1 for x in big[:20]), "line of 9.6 MB capped"),
        (sum(len(x) + 1 for x in big[:28]), "line of 10.0 MB capped"),
    ]
    parser = ClaudeParser()
    items = [i for _end, r in batch.records for i in mark_cut(parser.feed(r))]
    plain = ClaudeParser()
    want = [i for line in lines for i in plain.feed(json.loads(line))]
    assert [i.type for i in items] == [i.type for i in want]
    cut = [i for i in items if i.line_bytes is not None]
    assert [(i.type, i.line_bytes) for i in cut] == [
        ("tool_result", len(big[20])),
        ("assistant", len(big[28])),
    ]
    result, reply = cut
    assert isinstance(result, ToolResultEvent) and result.truncated_output
    added = len(" filler" * ((9_600_000 - len(lines[20])) // 7))
    original = json.loads(lines[20])["message"]["content"][0]["content"]
    assert result.full_length == len(original) + added
    assert result.output.startswith(original[:100]) and result.tool_use_id
    assert isinstance(reply, AssistantEvent) and reply.truncated
    text = json.loads(lines[28])["message"]["content"][0]["text"]
    assert reply.full_length == len(text) + len(" filler" * ((10_000_000 - len(lines[28])) // 7))
    done, expected = items[-1], want[-1]
    assert isinstance(done, TurnCompleteEvent) and isinstance(expected, TurnCompleteEvent)
    assert done == expected and done.cost_usd and done.output_tokens > 0


def test_a_codex_function_output_over_the_cap_is_cut_not_lost(tmp_path: Path) -> None:
    lines = ROLLOUT.read_bytes().splitlines()
    n = next(i for i, line in enumerate(lines) if b'"function_call_output"' in line)
    big = list(lines)
    big[n] = _enlarge(lines[n], ["payload", "output"], 9_000_000)
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(big) + b"\n")
    batch = JsonlTailer(path, objects_only=True).poll()
    assert [p.reason for p in batch.problems] == ["line of 9.0 MB capped"]
    parser, plain = CodexParser(), CodexParser()
    items = [i for _e, r in batch.records for i in mark_cut(parser.feed(r))]
    want = [i for line in lines for i in plain.feed(json.loads(line))]
    assert [i.type for i in items] == [i.type for i in want]
    (cut,) = [i for i in items if i.line_bytes is not None]
    (same,) = [w for w, i in zip(want, items, strict=True) if i is cut]
    assert isinstance(cut, ToolResultEvent) and isinstance(same, ToolResultEvent)
    assert cut.truncated_output and cut.tool_use_id == same.tool_use_id
    assert cut.full_length == len(same.output) + (9_000_000 - len(lines[n])) // 7 * 7
    assert same.output.startswith(cut.output[:200])


@pytest.mark.parametrize("chunk", [997, 1 << 20])
def test_a_long_line_written_in_pieces_is_read_once_whole(tmp_path: Path, chunk: int) -> None:
    """A line over the cap arriving over several polls: nothing is taken until its newline,
    the search for that newline never starts over, and the lines after it follow."""
    path = tmp_path / "t.jsonl"
    line = json.dumps({"n": 1, "text": "y " * 300_000}).encode()
    path.write_bytes(b'{"n": 0}\n')
    tailer = JsonlTailer(path, max_line_bytes=100_000)
    got: list[Any] = []
    for pos in range(0, len(line), 150_001):
        with path.open("ab") as fh:
            fh.write(line[pos : pos + 150_001])
        batch = TailBatch()
        got += [v for _e, v in tailer.stream(batch, None, chunk)]
        assert not batch.problems
    with path.open("ab") as fh:
        fh.write(b'\n{"n": 2}\n')
    batch = TailBatch()
    got += [v for _e, v in tailer.stream(batch, None, chunk)]
    assert [v["n"] for v in got] == [0, 1, 2]
    assert [p.reason for p in batch.problems] == ["line of 0.6 MB capped"]
    assert tailer.offset == path.stat().st_size
