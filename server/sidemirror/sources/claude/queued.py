"""Messages the user typed while the agent worked, which Claude Code records only as queueing.

A message typed during a turn is not a `user` line at first: Claude Code appends a
`queue-operation` record `enqueue` (with the `content`), and when the message leaves the queue
one with `remove` or `dequeue` (content repeated or not). At that point the model reads it: mid
turn, beside a tool result, or as the next prompt, in which case a real `user` line with the
same text is written too, before or after the record. `popAll` is the user pulling the queue
back into the input to edit it: those messages were not sent. So a message is shown once, marked
`queued`: where it left the queue, or at its real prompt line when that came first.

A queued local command (`/mcp`) never reaches the model: Claude Code runs it and records it as
a command line of its own, so it is not shown here.
"""

from __future__ import annotations

from typing import Any, Literal

from sidemirror.core.models import UserEvent
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.local_commands import LOCAL_COMMANDS
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import flatten_content

MAX_QUEUED = 100  # a queue the user fills faster than the agent drains it is cut here

Prompt = Literal["typed", "queued", "repeat"]


def _is_local_command(text: str) -> bool:
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word.startswith("/") and word[1:] in LOCAL_COMMANDS


class QueuedMessages:
    def __init__(self) -> None:
        self._waiting: list[str] = []  # enqueued, not yet sent, oldest first
        self._sent: list[str] = []  # shown since the last real prompt: the next one may be one
        self._prompted: list[str] = []  # sent as a real prompt before leaving the queue

    def operation(self, record: dict[str, Any]) -> list[UserEvent]:
        """One `queue-operation` record: the message it sent to the model, if any."""
        op = _text(record.get("operation"))
        text = flatten_content(record.get("content")).strip()
        if op == "enqueue":
            if text and len(self._waiting) < MAX_QUEUED:
                self._waiting.append(text)
            return []
        if op == "popAll":
            self._waiting.clear()
            return []
        if op not in ("remove", "dequeue"):
            return []
        if self._prompted and (not text or text in self._prompted):
            self._prompted.remove(text if text else self._prompted[0])
            return []  # shown at its prompt line already
        if not self._waiting:
            return []
        sent = text if text in self._waiting else self._waiting[0]
        self._waiting.remove(sent)
        if _is_local_command(sent):
            return []
        self._sent.append(sent)
        ts = _text(record.get("timestamp"))
        return [UserEvent(ts=ts, content=redact_text(sent), queued=True)]

    def prompt(self, text: str) -> Prompt:
        """A real prompt arrived: `repeat` when it is a queued message already shown (not shown
        again), `queued` when it is one still in the queue (shown here, marked), else `typed`.
        Only the first prompt after a message was shown can repeat it."""
        sent, self._sent = self._sent, []
        stripped = text.strip()
        if stripped in sent:
            return "repeat"
        if stripped in self._waiting:
            self._waiting.remove(stripped)
            self._prompted.append(stripped)
            return "queued"
        return "typed"
