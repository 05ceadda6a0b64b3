"""A session's title from its `summary` and `custom-title` records.

Claude Code writes `summary` records naming the conversation leaf they summarise (`leafUuid`),
and a file often carries summaries of *other* sessions (the one it was resumed from, a sibling
in the project): real transcripts start with a summary whose leaf is in another file. Such a
summary titles the wrong conversation, so one counts only when its leaf is a record of this
file; until then it waits, and a record with that uuid read later adopts it. A `custom-title`
(the user's `/rename`) always counts. The latest title that counts wins. Without one, the first
real prompt titles the session (`title_of`, `prompt_title`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.tools import slash_command, user_kind
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import one_line

MAX_WAITING = 64  # summaries whose leaf is not read yet (a file holds a handful)
TITLE_CHARS = 80


def shown_prompt(text: str) -> str:
    """A real prompt's text as shown: a slash command as the user typed it."""
    return slash_command(text) if "<command-name>" in text else text


def title_of(prompt: str) -> str | None:
    """The title a session's first prompt (as shown) gives it; None when it is blank."""
    return redact_text(one_line(prompt))[:TITLE_CHARS] if prompt.strip() else None


def prompt_title(record: dict[str, Any]) -> str | None:
    """The title a main-thread `user` record gives its session if it is the first real prompt
    (what `ClaudeParser.first_prompt` takes), without making its items: the startup index
    titles ten thousand sessions this way."""
    kind, text = user_kind(record)
    return title_of(shown_prompt(text)) if kind == "prompt" else None


class Titles:
    def __init__(self, seen: Callable[[str], bool]) -> None:
        # `seen`: whether a uuid is a record of this file already read.
        self._seen = seen
        self._waiting: dict[str, str] = {}  # leafUuid -> summary text, its leaf not read yet
        self.title: str | None = None

    def record(self, record: dict[str, Any]) -> None:
        """Every record of the session's own file, in order."""
        kind = record.get("type")
        if kind == "summary":
            text, leaf = _text(record.get("summary")), _text(record.get("leafUuid"))
            if not text or not leaf:
                return
            if self._seen(leaf):
                self._adopt(text)
            elif len(self._waiting) < MAX_WAITING:
                self._waiting[leaf] = text
        elif kind == "custom-title":
            custom = _text(record.get("customTitle"))
            if custom:
                self._adopt(custom)
        elif self._waiting:
            text = self._waiting.pop(_text(record.get("uuid")), "")
            if text:
                self._adopt(text)

    def _adopt(self, text: str) -> None:
        self.title = redact_text(one_line(text))
