"""A tool call made before the prompt a parse starts from, found when its result comes after it.

A prompt the user sends while tools run (a queued message) is written before those tools'
results. A parse that starts at that prompt (sync.py, history.py) has not seen the calls, yet a
result's item carries its call's name and duration, and some results show nothing at all (a
routine TodoWrite's). So when such a parse meets a result of a call it does not know, the call's
line is looked for in the bytes just before the parse's start: the call id is a quoted token
there (an id inside a JSON string would have escaped quotes), so a backwards byte search finds
the line without decoding the rest. A call further back than LOOK_BACK_BYTES is left unknown,
as is one a parse from byte 0 never saw either.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sidemirror.core.jsonline import decode_line
from sidemirror.sources.common import as_text
from sidemirror.sources.files.regular import open_regular

LOOK_BACK_BYTES = 8 * 1024 * 1024  # a call still running when a prompt is sent is recent


class EarlierCalls:
    """Looks up main-thread tool calls in `path` before the line start `before`. The bytes are
    read for each lookup and not kept (a parser lives as long as its session; lookups are rare),
    the answers are."""

    def __init__(self, path: Path, before: int) -> None:
        self.path = path
        self.before = before
        self._answers: dict[str, tuple[str, str] | None] = {}

    def __call__(self, tool_id: str) -> tuple[str, str] | None:
        """The call's tool name and timestamp, or None when it is not there."""
        if not tool_id or self.before <= 0:
            return None
        if tool_id not in self._answers:
            self._answers[tool_id] = self._look_up(tool_id)
        return self._answers[tool_id]

    def _look_up(self, tool_id: str) -> tuple[str, str] | None:
        low = max(0, self.before - LOOK_BACK_BYTES)
        try:
            with open_regular(self.path) as fh:
                data = os.pread(fh.fileno(), self.before - low, low)
        except OSError:
            return None
        needle = json.dumps(tool_id).encode()
        at = len(data)
        while (at := data.rfind(needle, 0, at)) >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            if start == 0 and low > 0:
                return None  # a line cut by the look-back: older than it reaches
            end = data.find(b"\n", at)
            found = _call_in(data[start : end if end >= 0 else len(data)], tool_id)
            if found is not None:
                return found
        return None


def _call_in(line: bytes, tool_id: str) -> tuple[str, str] | None:
    ok, record = decode_line(line)
    if not ok or not isinstance(record, dict) or record.get("type") != "assistant":
        return None
    if record.get("isSidechain") is True:
        return None
    message: Any = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        is_call = isinstance(block, dict) and block.get("type") == "tool_use"
        if is_call and as_text(block.get("id")) == tool_id:
            return as_text(block.get("name")), as_text(record.get("timestamp"))
    return None
