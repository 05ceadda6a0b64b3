"""Canonical items → public wire events: truncation of the one long field per item type.

Items reach the store already redacted by their source adapter; the store keeps them
whole so "show more" can fetch the full text. The projection only shortens for the stream.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from sidemirror.core.models import (
    TRUNCATED_FIELDS,
    AssistantDeltaEvent,
    SessionItem,
    ThinkingDeltaEvent,
)
from sidemirror.core.truncate import ELLIPSIS, truncate

DEFAULT_MAX_CHARS = 500
# Open segments whose sent text is remembered; segment ids are never reused, so the oldest
# can be forgotten (its complete item has long replaced it).
_OPEN_SEGMENTS = 256


class Projector:
    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        self.max_chars = max_chars
        self.live = LiveCut(max_chars)

    def to_dict(self, item: SessionItem) -> dict[str, Any]:
        data = item.model_dump(mode="json", exclude_none=False)
        fields = TRUNCATED_FIELDS.get(item.type)
        if fields is not None:
            text_field, flag = fields
            shown, truncated, full_length = truncate(data[text_field], self.max_chars)
            data[text_field] = shown
            # An item read from an over-long line is already cut: it keeps saying so.
            data[flag] = truncated or data[flag]
            data["full_length"] = max(full_length, data["full_length"])
        if data.get("diff"):
            data["diff"] = cap_diff(data["diff"], self.max_chars)
        if data.get("diffs"):  # a patch of several files: each capped as one diff is
            data["diffs"] = [cap_diff(diff, self.max_chars) for diff in data["diffs"]]
        return data

    def to_json(self, item: SessionItem) -> str:
        # ensure_ascii=False keeps text readable; json.dumps never emits raw newlines, so one
        # item is always one SSE `data:` line however hostile its text.
        return json.dumps(self.to_dict(item), ensure_ascii=False, separators=(",", ":"))


def full_dict(item: SessionItem) -> dict[str, Any]:
    """The item whole (redacted, not truncated), for "show more"."""
    data = item.model_dump(mode="json")
    fields = TRUNCATED_FIELDS.get(item.type)
    if fields is not None:
        data["full_length"] = max(len(data[fields[0]]), data["full_length"])
    return data


def cap_diff(diff: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """A diff's hunks cut to `max_chars` characters of lines, as the long text fields are: the
    first lines whole, the one that crosses the limit cut, the rest left out. Hunk headers and
    the `added`/`removed` counts stay those of the whole change."""
    budget = max_chars
    cut = False
    shown_lines = 0
    hunks: list[dict[str, Any]] = []
    for hunk in diff["hunks"]:
        lines: list[str] = []
        for line in hunk["lines"]:
            if budget < 2:  # not even a marker and one character: leave the rest out
                break
            shown, was_cut, _ = truncate(line, budget)
            lines.append(shown)
            budget -= len(line)
            cut = cut or was_cut
        if lines:
            hunks.append({**hunk, "lines": lines})
        shown_lines += len(lines)
    cut = cut or shown_lines < sum(len(h["lines"]) for h in diff["hunks"])
    return {**diff, "hunks": hunks, "truncated": bool(diff.get("truncated")) or cut}


class LiveCut:
    """Live partial text (`assistant_delta`, `thinking_delta`) cut by the rule items are cut by.

    Deltas are append-mode, so the cut is on a segment's cumulative text: deltas go out whole
    while the segment fits in `max_chars`; the one that passes it goes out as the rest of the
    cut text (ending in `…`) with `truncated: true`, and the segment sends nothing more. The
    complete item that follows is cut the same way and carries `full_length`.
    """

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        # (session, segment) → the text sent so far (at most max_chars), or None once cut.
        self._sent: OrderedDict[tuple[str, str], str | None] = OrderedDict()

    def cut(self, session_id: str, item: SessionItem) -> bool:
        """Cut `item` in place if it is partial text; False when it must not be sent at all."""
        if not isinstance(item, AssistantDeltaEvent | ThinkingDeltaEvent):
            return True
        key = (session_id, item.segment_id)
        sent = self._sent.get(key, "")
        if sent is None:
            return False  # already cut: the marker went out
        text = sent + item.text
        if len(text) <= self.max_chars:
            self._remember(key, text)
            return True
        shown, _, _ = truncate(text, self.max_chars)
        # The sent part normally leads the cut text; a cut that falls inside it (a grapheme
        # that straddled two deltas) only adds the marker.
        item.text = shown[len(sent) :] if shown[:-1].startswith(sent) else ELLIPSIS
        item.truncated = True
        self._remember(key, None)
        return True

    def _remember(self, key: tuple[str, str], sent: str | None) -> None:
        self._sent[key] = sent
        self._sent.move_to_end(key)
        while len(self._sent) > _OPEN_SEGMENTS:
            self._sent.popitem(last=False)
