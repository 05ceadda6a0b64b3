"""What the readable formats (Markdown, HTML) say alike: times, totals, a turn's footer, a
diff's lines, cut text; and the writer base that opens and closes an abandoned branch around
the items on it (the walker marks each item; the writer sees where a run of them starts). A
turn's line shows the agent's own duration where a `turn_duration` gave one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TextIO

from sidemirror.export.walker import Header, Shown


def cut(text: str, max_chars: int | None, full_length: int = 0) -> str:
    """`text`, or its first `max_chars` characters and a visible mark of what was left out.
    `full_length` is the whole text's where the server sent only its head (`needs_whole`
    fetched no more: the head held `max_chars`)."""
    if max_chars is None or len(text) <= max_chars:
        return text
    left = max(len(text), full_length) - max_chars
    return f"{text[:max_chars]}\n[… cut: {left} more characters]"


def when(ts: str | None) -> str:
    return (ts or "").replace("T", " ").removesuffix("Z")[:19]


def totals(h: Header) -> str:
    cost = f", ${h.cost_usd:.4f}" if h.cost_usd is not None else ""
    return (
        f"{h.items} items, {h.prompts} prompts, {h.turns} turns; "
        f"{h.tokens['input']:,} input, {h.tokens['output']:,} output, "
        f"{h.tokens['cache']:,} cache tokens{cost}"
    )


def turn_line(item: dict[str, Any]) -> str:
    """One turn's footer: tokens, cost, time, model and how it ended."""
    parts = [f"{item.get('input_tokens', 0):,} in / {item.get('output_tokens', 0):,} out tokens"]
    if item.get("cost_usd") is not None:
        parts.append(f"${item['cost_usd']:.4f}")
    if item.get("duration_ms") is not None:
        parts.append(f"{item['duration_ms'] / 1000:.1f} s")
    parts += [str(v) for v in (item.get("model"), item.get("status")) if v]
    turn = f"Turn {item['turn']}" if item.get("turn") is not None else "Turn"
    return f"{turn}: " + ", ".join(parts)


def attachments_line(item: dict[str, Any]) -> str:
    """What a message carried besides its text (the server keeps only type and size)."""
    shown = [
        f"{a.get('media_type')}" + (f" ({a['size']:,} bytes)" if a.get("size") else "")
        for a in item.get("attachments") or []
    ]
    return f"Attachments: {', '.join(shown)}" if shown else ""


def diff_text(diff: dict[str, Any]) -> str:
    lines = [f"--- {diff['path']}", f"+++ {diff['path']}"]
    for hunk in diff.get("hunks") or []:
        old = f"{hunk['old_start']},{hunk['old_lines']}"
        lines.append(f"@@ -{old} +{hunk['new_start']},{hunk['new_lines']} @@")
        lines += hunk["lines"]
    if diff.get("truncated"):
        lines.append("[… the rest of this change is not shown]")
    return "\n".join(lines)


class ReadableWriter:
    """A writer of blocks, one per item, with an abandoned branch folded in `OPEN`…`CLOSE`."""

    OPEN = ""
    CLOSE = ""

    def __init__(self, out: TextIO, max_chars: int | None) -> None:
        self.out = out
        self.max_chars = max_chars
        self.in_abandoned = False

    def text(self, item: dict[str, Any], field: str) -> str:
        """A long field, cut as the user chose."""
        return cut(item.get(field) or "", self.max_chars, item.get("full_length") or 0)

    def block(self, shown: Shown) -> str:
        raise NotImplementedError

    def header(self, header: Header) -> None:
        raise NotImplementedError

    def item(self, shown: Shown) -> None:
        if shown.item.get("type") == "turn_duration":
            return  # read on its turn's line (`measured_ms`)
        if shown.measured_ms is not None:
            item = {**shown.item, "duration_ms": shown.measured_ms}
            shown = replace(shown, item=item)
        if shown.abandoned != self.in_abandoned:
            self.in_abandoned = shown.abandoned
            self.out.write(self.OPEN if shown.abandoned else self.CLOSE)
        self.out.write(self.block(shown))

    def close(self) -> None:
        if self.in_abandoned:
            self.out.write(self.CLOSE)
