"""One pushed session for the session card, the diff and the layout tests at 420 px: turns
with small token counts (the timeline writes them whole), a price on each, a sub-agents' part,
a first day that is not today, and an edit whose diff has a line far wider than the panel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

WS = "/tmp/e2e-session-card"
SID = "card-session"
LONG_LINE = "    result = parse(" + ", ".join(f"argument_{n}=value_{n}" for n in range(12)) + ")"


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_events() -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    old = iso(now - timedelta(days=3))
    today = iso(now - timedelta(minutes=5))
    diff = {
        "path": "src/parser.py",
        "added": 1,
        "removed": 1,
        "hunks": [{"old_start": 10, "old_lines": 3, "new_start": 10, "new_lines": 3,
                   "lines": [" def run():", "-    result = parse(text)", f"+{LONG_LINE}",
                             "     return result"]}],
    }  # fmt: skip
    turn = {"type": "turn_complete", "status": "ok", "cost_source": "reported"}
    return [
        {"type": "user", "content": "Make the parser take its options by name", "ts": old},
        {"type": "assistant", "content": "I will look at parse() first.", "ts": old},
        {**turn, "turn": 1, "input_tokens": 120, "output_tokens": 340, "cache_read_tokens": 500,
         "cache_write_tokens": 60, "cost_usd": 0.25, "model": "claude-opus-4-6", "ts": old},
        {"type": "user", "content": "Now change the call site", "ts": today},
        {"type": "tool_use", "tool_use_id": "toolu_card_edit", "name": "Edit", "kind": "edit",
         "input": "src/parser.py", "diff": diff, "ts": today},
        {"type": "tool_result", "tool_use_id": "toolu_card_edit", "output": "The file was edited.",
         "ts": today},
        {"type": "assistant", "content": "The call site passes every option by name now.",
         "ts": today},
        {**turn, "turn": 2, "input_tokens": 210, "output_tokens": 95, "cache_read_tokens": 700,
         "cache_write_tokens": 0, "cost_usd": 0.5, "subagent_tokens": 100,
         "subagent_cost_usd": 0.125, "model": "claude-haiku-4-5", "ts": today},
    ]  # fmt: skip
