"""Redaction for text that arrives in pieces (live partial assistant text).

Redacting each piece alone would miss a secret split across two pieces, so the whole text so far
is redacted each time and only a new suffix of that is released. The release stops at the last
whitespace (a secret is one token and may still be growing) and before an unclosed PEM block
(a key spans lines). If redacting more text ever changes what was already released, the segment
stops streaming: nothing unredacted has left, and the complete item that follows replaces it.
"""

from __future__ import annotations

from sidemirror.core.redact import redact_text

_WHITESPACE = (" ", "\n", "\t", "\r")
_PEM_BEGIN = "-----BEGIN"
_PEM_END = "-----END"


def _safe_end(text: str) -> int:
    end = max(text.rfind(ws) for ws in _WHITESPACE) + 1
    begin = text.rfind(_PEM_BEGIN)
    if begin >= 0 and _PEM_END not in text[begin:]:
        end = min(end, begin)
    return end


class DeltaRedactor:
    """One streamed segment: raw text in, redacted append-only deltas out."""

    def __init__(self) -> None:
        self.raw = ""
        self.sent = ""
        self.broken = False

    def push(self, piece: str) -> str:
        self.raw += piece
        return self._release(final=False)

    def finish(self) -> str:
        """Everything not yet released (the segment is complete)."""
        return self._release(final=True)

    def _release(self, *, final: bool) -> str:
        if self.broken:
            return ""
        redacted = redact_text(self.raw)
        if not redacted.startswith(self.sent):
            self.broken = True
            return ""
        end = len(redacted) if final else _safe_end(redacted)
        if end <= len(self.sent):
            return ""
        out = redacted[len(self.sent) : end]
        self.sent += out
        return out
