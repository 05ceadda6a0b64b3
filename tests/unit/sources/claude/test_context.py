"""`turn_complete.context_tokens`/`context_window` from real recorded Claude Code transcripts:
what the turn's last main-thread request sent (input, cache reads, cache writes), and the
model's window from the dated table."""

from __future__ import annotations

import json

from sidemirror.core.models import TurnCompleteEvent
from sidemirror.core.pricing import context_window_for

from tests.harness.paths import FIXTURES
from tests.transcripts import SLOTS, positional_parse

SAMPLES = sorted(p for p in (FIXTURES / "claude").glob("*/*.jsonl") if "agent-" not in p.name)


def last_request_before(data: bytes, end: int) -> tuple[int, str] | None:
    """(tokens in context, model) of the last main-thread assistant line ending by `end`."""
    found = None
    offset = 0
    for line in data[:end].split(b"\n"):
        offset += len(line) + 1
        if not line.strip() or offset > end:
            continue
        record = json.loads(line)
        message = record.get("message") or {}
        usage = message.get("usage") if isinstance(message, dict) else None
        if record.get("type") != "assistant" or record.get("isSidechain") or not usage:
            continue
        if message.get("model") == "<synthetic>":
            continue
        seen = (
            usage.get("input_tokens", 0)
            + usage.get("cache_read_input_tokens", 0)
            + usage.get("cache_creation_input_tokens", 0)
        )
        found = (seen, message["model"])
    return found


def test_each_turn_says_what_its_last_request_put_in_the_context() -> None:
    checked = 0
    for path in SAMPLES:
        data = path.read_bytes()
        for item in positional_parse(data):
            if not isinstance(item, TurnCompleteEvent) or not item.output_tokens:
                continue
            expected = last_request_before(data, item.seq // SLOTS)
            assert expected is not None
            assert item.context_tokens == expected[0] > 0
            assert item.context_window == context_window_for(expected[1])
            checked += 1
    assert checked >= 4


def test_the_window_comes_from_the_dated_table_and_is_null_when_it_has_none() -> None:
    assert context_window_for("claude-sonnet-4-5-20250929") == 200_000
    assert context_window_for("gpt-5-codex") == 400_000
    assert context_window_for("claude-opus-4-6") is None  # priced, but no published window
    assert context_window_for("some-local-model") is None
