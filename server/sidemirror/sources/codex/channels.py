"""One text written to both of a rollout's channels is shown once: matched by place, not text.

Codex writes what the model said twice: as a `response_item` (what the model saw) and as an
`event_msg` (what the UI showed): `message`/`agent_message`, `reasoning`/`agent_reasoning`. The
two copies need not read the same (Codex Desktop adds the files a prompt mentions to the event
only; sanitised recordings replace each with its own placeholder), but they are written next to
each other: the copy from the other channel follows before anything else is shown. A reasoning
item with several summary parts has one event a part.

A user `message` item is the prompt's copy only next to its `user_message` event; the other user
items the model is given (AGENTS.md, `<environment_context>`, skills) are injected context. Known
injected blocks are tagged (`<tag>…</tag>`, `# AGENTS.md instructions`) and never shown; a user
item that is neither is shown as context (`system`, subtype `context`) once its place says it is
not the prompt.
"""

from __future__ import annotations

import re
from typing import Any

from sidemirror.sources.common import as_list as _list
from sidemirror.sources.common import as_text as _text

ITEM, EVENT = "item", "event"
_TAGGED = re.compile(r"^\s*(?:<([A-Za-z_][\w -]*)>.*</\1>\s*$|# AGENTS\.md instructions)", re.S)
# Records that show something: a user item held back is decided before them (parser.py).
SHOWING_EVENTS = frozenset(
    {"agent_message", "agent_reasoning", "error", "stream_error", "task_complete",
     "turn_aborted", "exec_command_end"}
)  # fmt: skip


def text_parts(payload: dict[str, Any]) -> list[str]:
    """The text of each content part of a message item, empty ones left out."""
    texts = (_text(c.get("text")) for c in _list(payload.get("content")) if isinstance(c, dict))
    return [t for t in texts if t.strip()]


def is_injected(parts: list[str]) -> bool:
    """A user item whose every part is an injected block (one tag around it, or AGENTS.md)."""
    return bool(parts) and all(_TAGGED.match(part) for part in parts)


def shows(kind: Any, payload: dict[str, Any]) -> bool:
    """Whether a record may show something (so a user item held before it must be decided)."""
    if kind == "response_item":
        if payload.get("type") == "message":
            return payload.get("role") == "assistant"
        return payload.get("type") not in ("ghost_snapshot", "compaction")
    if kind == "event_msg":
        return payload.get("type") in SHOWING_EVENTS
    return kind not in ("session_meta", "turn_context")


class Echoes:
    """For each kind of text (`assistant`, `thinking`): the channel whose next copy is the echo
    of what was just shown, and how many copies it still owes."""

    def __init__(self) -> None:
        self._owed: dict[str, tuple[str, int]] = {}

    def is_echo(self, kind: str, channel: str) -> bool:
        owed = self._owed.get(kind)
        if owed is None or owed[0] != channel:
            return False
        left = owed[1] - 1 if channel == EVENT else 0  # one item stands for all its events
        if left > 0:
            self._owed[kind] = (channel, left)
        else:
            del self._owed[kind]
        return True

    def shown(self, kind: str, channel: str, parts: int = 1) -> None:
        if channel == ITEM:
            self._owed[kind] = (EVENT, parts)
        elif self._owed.get(kind, (EVENT, 0))[0] != ITEM:
            self._owed[kind] = (ITEM, 1)  # events before their item: the item echoes them all

    def clear(self) -> None:
        """Something else was shown: a copy from now on is a new text."""
        self._owed.clear()
