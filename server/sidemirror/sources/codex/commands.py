"""Codex commands: what a command really did, and what `write_stdin` typed (pure).

Unified exec (`exec_command`) answers the model after `yield_time_ms` (often 1 s): a command still
running then has a `function_call_output` that says `Process running with session ID N`, with
the output of that first second and its wall time. That output is not the command's result: the
`exec_command_end` event (an `event_msg` with the call's `call_id`), written when the process
exits, holds the whole output (`aggregated_output`, else `stdout`/`stderr`), the `exit_code`,
the `status` and the `duration` (`{"secs", "nanos"}`; some builds write `duration_ms`). So a
card takes its result from that event; an output that says the process is still running is held
back until the end arrives, and only shown, marked as such, if the turn closes without it
(Codex builds that do not persist the event).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.models import ToolResultEvent
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text

_RUNNING = re.compile(r"^Process running with session ID\s*\d+\s*$", re.M)
STILL_RUNNING = "(still running when the turn ended: its end was not recorded)"
# How a control character typed into a terminal is shown: the key that sends it.
_KEYS = {"\n": "⏎", "\r": "⏎", "\t": "⇥", "\x1b": "⎋", "\x7f": "⌫"}
NOTHING_TYPED = "(nothing typed: waits for output)"


def still_running(output_head: str) -> bool:
    """Whether a command's `function_call_output` says its process had not exited yet."""
    return _RUNNING.search(output_head[:2000]) is not None


def _count(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None


def end_duration_ms(payload: dict[str, Any]) -> int | None:
    """`duration` as Rust serialises a `Duration` (`{"secs", "nanos"}`), or `duration_ms`."""
    duration = _dict(payload.get("duration"))
    secs, nanos = _count(duration.get("secs")), _count(duration.get("nanos"))
    if secs is not None:
        return round(secs * 1000 + (nanos or 0) / 1_000_000)
    ms = _count(payload.get("duration_ms"))
    return round(ms) if ms is not None else None


def end_output(payload: dict[str, Any]) -> tuple[str, bool]:
    """(text, is_error) of an `exec_command_end`: the output the command printed, with a
    non-zero exit code said on its first line (as a Claude Code Bash result says it)."""
    text = _text(payload.get("aggregated_output"))
    if not text:
        streams = (_text(payload.get("stdout")), _text(payload.get("stderr")))
        text = "\n".join(s for s in streams if s) or _text(payload.get("formatted_output"))
    code = payload.get("exit_code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    failed = _text(payload.get("status")) in ("failed", "declined") or code not in (None, 0)
    if code not in (None, 0):
        text = f"Exit code {code}\n{text}" if text else f"Exit code {code}"
    return text, failed


def typed(chars: Any) -> str:
    """What `write_stdin` sent to a session, as keys: `y⏎`, `^C`; an empty write only reads."""
    text = _text(chars)
    if not text:
        return NOTHING_TYPED
    shown = []
    for ch in text:
        if ch in _KEYS:
            shown.append(_KEYS[ch])
        elif ord(ch) < 0x20:
            shown.append("^" + chr(ord(ch) + 64))  # Ctrl-C is ^C, as a terminal echoes it
        else:
            shown.append(ch)
    return "".join(shown)


@dataclass
class CommandResults:
    """One result a call, from whichever record knows it first: a finished output, or the end
    event; an output of a process still running waits for its end."""

    held: dict[str, ToolResultEvent] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)

    def output(self, result: ToolResultEvent, running: bool) -> list[ToolResultEvent]:
        call_id = result.tool_use_id
        if call_id in self.done:
            return []  # the end event already gave it
        if running:
            self.held[call_id] = result
            return []
        self.held.pop(call_id, None)
        self.done.add(call_id)
        return [result]

    def ended(self, result: ToolResultEvent) -> list[ToolResultEvent]:
        if result.tool_use_id in self.done:
            return []
        self.held.pop(result.tool_use_id, None)
        self.done.add(result.tool_use_id)
        return [result]

    def unfinished(self) -> list[ToolResultEvent]:
        """The held outputs, when their turn closes with no end: shown, said to be unfinished,
        with no duration (the wall time was only how long the model waited)."""
        results = []
        for call_id, result in self.held.items():
            note = f"{STILL_RUNNING}\n{result.output}" if result.output else STILL_RUNNING
            results.append(result.model_copy(update={"output": note, "duration_ms": None}))
            self.done.add(call_id)
        self.held.clear()
        return results
