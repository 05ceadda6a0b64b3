"""What a decision card shows: the whole tool input that Allow approves, field by field.

Every leaf of the input is a field: a Bash `command`, each `edits[2].new_string` of a MultiEdit,
a NotebookEdit's `new_source`, a Write's whole `content`, the text a browser tool will type.
Nothing is cut. Secrets are masked where they are and nowhere else (`card_spans`): the served
text carries `[REDACTED:<rule>]` at each mask, and the mask's `start`/`end` cover that marker, in
UTF-16 code units (what the panel's JavaScript strings count). The hidden values stay in this
process's memory only, for `POST /api/decisions/{id}/reveal`, until the request is settled;
they are never stored or logged.

What a browser tool will type (a password as often as a search) is a mask of its own, rule
`typed`: the listing is readable with the runtime-file token, which must not carry it, and the
panel reveals it by itself (it is the action being approved), through the reveal route only it
can call.

An input larger than `CARD_CHARS` (or nested too deeply to walk) is not shown at all: the card
says so and offers only Deny, since no one can judge what they were not shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.redact import MAX_JSON_DEPTH, CardSpan, card_spans, is_secret_key
from sidemirror.core.typed import is_typed_key, is_typing, verb_key

CARD_CHARS = 524_288  # the whole input, all fields together


@dataclass
class Card:
    fields: list[dict[str, Any]]
    whole: bool
    chars: int
    hidden: dict[str, str] = field(default_factory=dict)  # mask id → the secret (memory only)

    def describe(self) -> dict[str, Any]:
        return {
            "whole": self.whole,
            "chars": self.chars,
            "limit": CARD_CHARS,
            "fields": self.fields,
        }

    def forget(self) -> None:
        self.hidden.clear()


class _TooDeep(Exception):
    pass


def build_card(tool_input: Any, tool_name: str = "") -> Card:
    typing = is_typing(verb_key(tool_name))
    try:
        leaves = _leaves(tool_input)
    except _TooDeep:
        return Card([], whole=False, chars=0)
    chars = sum(len(text) for _, _, text in leaves)
    if chars > CARD_CHARS:
        return Card([], whole=False, chars=chars)
    card = Card([], whole=True, chars=chars)
    for path, key, text in leaves:
        if key and is_secret_key(key):
            spans = _line_spans(text, "secret_field")
        elif typing and key and is_typed_key(key):
            spans = _line_spans(text, "typed")
        else:
            spans = card_spans(text)
        card.fields.append(_field(card, path, text, spans))
    return card


def _leaves(value: Any) -> list[tuple[str, str, str]]:
    """(path, key, text) of every leaf, in input order: strings as they are, other values as
    JSON (`true`, `60000`, `[]`): they change what runs too."""
    out: list[tuple[str, str, str]] = []
    stack: list[tuple[str, str, Any, int]] = [
        ("input" if not isinstance(value, dict) else "", "", value, 0)
    ]
    while stack:
        path, key, item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _TooDeep
        if isinstance(item, dict) and item:
            children = [(f"{path}.{k}" if path else str(k), str(k), v) for k, v in item.items()]
        elif isinstance(item, list) and item:
            children = [(f"{path}[{i}]", key, v) for i, v in enumerate(item)]
        else:
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            out.append((path or "input", key, text))
            continue
        stack.extend((p, k, v, depth + 1) for p, k, v in reversed(children))
    return out


def _line_spans(text: str, rule: str) -> list[CardSpan]:
    """A value masked whatever it looks like, by where it is: a secret-named key (`password`),
    or what a browser tool types. Each of its lines is one mask."""
    spans: list[CardSpan] = []
    at = 0
    for line in text.split("\n"):
        if line.strip():
            spans.append(CardSpan(rule, at, at + len(line)))
        at += len(line) + 1
    return spans


def _utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _field(card: Card, path: str, text: str, spans: list[CardSpan]) -> dict[str, Any]:
    parts: list[str] = []
    masks: list[dict[str, Any]] = []
    at = 0
    offset = 0  # in UTF-16 units, of the served text
    for span in spans:
        before = text[at : span.start]
        parts.append(before)
        offset += _utf16_len(before)
        marker = f"[REDACTED:{span.rule}]"
        mask_id = f"m{len(card.hidden)}"
        card.hidden[mask_id] = text[span.start : span.end]
        masks.append(
            {"rule": span.rule, "start": offset, "end": offset + len(marker), "id": mask_id}
        )
        parts.append(marker)
        offset += len(marker)
        at = span.end
    parts.append(text[at:])
    return {"path": path, "text": "".join(parts), "masks": masks}
