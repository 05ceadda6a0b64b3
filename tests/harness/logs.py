"""Reading a server's log for what a user must never get: a traceback."""

from __future__ import annotations

# A client hanging up mid-write is the client's doing, not a fault (see test_disconnect_noise).
DISCONNECT_ERRORS = ("ClientConnectionResetError", "ConnectionResetError", "BrokenPipeError")


def tracebacks(log_text: str) -> list[str]:
    """The tracebacks in a server log, each as its last line (the exception)."""
    found = []
    lines = log_text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("Traceback"):
            end = n + 1
            while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
                end += 1
            found.append(lines[end] if end < len(lines) else "?")
    return found


def unexpected_tracebacks(log_text: str) -> list[str]:
    """Tracebacks other than a client hanging up mid-write."""
    return [t for t in tracebacks(log_text) if not t.split(":")[0].endswith(DISCONNECT_ERRORS)]
