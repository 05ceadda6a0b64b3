"""Codex rollouts: an `apply_patch` call carries its diff, and a turn's context comes from the
last `token_count` (its `last_token_usage` input and `model_context_window`)."""

from __future__ import annotations

from sidemirror.core.models import ToolUseEvent, TurnCompleteEvent

from tests.unit.sources.codex.test_parser import SESSION, _line, parse

# A `token_count` line as Codex 0.12x writes it (copied from a recorded rollout).
TOKEN_COUNT = _line(
    "event_msg",
    {
        "type": "token_count",
        "info": {
            "total_token_usage": {
                "input_tokens": 36522,
                "cached_input_tokens": 2432,
                "output_tokens": 606,
                "reasoning_output_tokens": 516,
                "total_tokens": 37128,
            },
            "last_token_usage": {
                "input_tokens": 36522,
                "cached_input_tokens": 2432,
                "output_tokens": 606,
                "reasoning_output_tokens": 516,
                "total_tokens": 37128,
            },
            "model_context_window": 258400,
        },
    },
)


def test_apply_patch_carries_the_change() -> None:
    _parser, items = parse(SESSION)
    (patch,) = [i for i in items if isinstance(i, ToolUseEvent) and i.name == "apply_patch"]
    assert patch.diff is not None
    assert (patch.diff.path, patch.diff.added, patch.diff.removed) == ("a.py", 1, 1)
    assert patch.diff.hunks[0].lines == ["-x", "+y"]


def test_a_turn_reports_the_context_of_its_last_request() -> None:
    # Without a token count carrying a window: the table's window for gpt-5-codex.
    _parser, items = parse(SESSION)
    first = next(i for i in items if isinstance(i, TurnCompleteEvent))
    assert first.context_window == 400_000 and first.context_tokens is not None
    # With one: Codex's own figures (input includes the cached part: what the model saw).
    at = SESSION.index(next(r for r in SESSION if r["payload"].get("type") == "task_complete"))
    _parser, items = parse(SESSION[:at] + [TOKEN_COUNT] + SESSION[at:])
    first = next(i for i in items if isinstance(i, TurnCompleteEvent))
    assert (first.context_tokens, first.context_window) == (36522, 258400)
