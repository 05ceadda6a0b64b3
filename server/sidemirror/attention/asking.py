"""What a session waiting for the user's answer asks: the question the inbox and a notification
carry. Claude Code's `AskUserQuestion` tool input holds `questions: [{"question", "header",
"options", "multiSelect"}]` (its PreToolUse hook event has it whole); the first question,
redacted and capped, stands for the wait ("and N more" when there are several)."""

from __future__ import annotations

from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.core.truncate import truncate

QUESTION_CHARS = 300  # a notification shows a few lines; the panel shows the whole card


def question_of(name: str, payload: dict[str, Any]) -> str | None:
    """The question an `AskUserQuestion` PreToolUse event asks; None for any other event."""
    if name != "PreToolUse" or payload.get("tool_name") != "AskUserQuestion":
        return None
    tool_input = payload.get("tool_input")
    questions = tool_input.get("questions") if isinstance(tool_input, dict) else None
    if not isinstance(questions, list) or not questions:
        return None
    texts = [q.get("question") for q in questions if isinstance(q, dict)]
    first = next((t for t in texts if isinstance(t, str) and t.strip()), None)
    if first is None:
        return None
    more = f" (and {len(texts) - 1} more)" if len(texts) > 1 else ""
    return truncate(redact_text(first.strip()), QUESTION_CHARS)[0] + more
