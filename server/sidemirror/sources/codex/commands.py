"""Codex commands: what a command really did, and what `write_stdin` typed (pure).

Unified exec (`exec_command`) answers the model after `yield_time_ms` (often 1 s): a command still
running then has a `function_call_output` that says `Process running with session ID N`, with
the output of that first second and its wall time. That output is not the command's result: the
`exec_command_end` event (an `event_msg` with the call's `call_id`), written when the process
exits, holds the whole output (`aggregated_output`, else `stdout`/`stderr`), the `exit_code`,
the `status` and the `duration` (`{"secs", "nanos"}`; some builds write `duration_ms`). So a
card takes its result from that event; an output that says the process is still running is held
back until the end arrives. Codex builds that do not persist the event still say how it ended:
the model polls the process with `write_stdin` (`session_id` N), and the poll that sees it exit
says `Process exited with code N`; the card then takes the output read meanwhile, that exit code
and the time from the call to that poll. A command whose end nobody saw is shown, said to be
unfinished, when its turn closes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import ms_between
from sidemirror.core.models import ToolResultEvent
from sidemirror.core.recent import CALLS_REMEMBERED, RecentSet
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text

_RUNNING = re.compile(r"^Process running with session ID\s*(\d+)\s*$", re.M)
_EXITED = re.compile(r"^Process exited with code\s*(-?\d+)\s*$", re.M)
STILL_RUNNING = "(still running when the turn ended: its end was not recorded)"
# How a control character typed into a terminal is shown: the key that sends it.
_KEYS = {"\n": "⏎", "\r": "⏎", "\t": "⇥", "\x1b": "⎋", "\x7f": "⌫"}
NOTHING_TYPED = "(nothing typed: waits for output)"


def running_session(output: str) -> str | None:
    """The session id of a process a `function_call_output` says is still running, if so."""
    found = _RUNNING.search(output[:2000])
    return found.group(1) if found else None


def exited_with(output: str) -> int | None:
    """The exit code a command's (or a poll's) output reports, if its process exited."""
    found = _EXITED.search(output[:2000])
    return int(found.group(1)) if found else None


def with_exit_code(text: str, code: int | None) -> str:
    """A non-zero exit code said on the output's first line (as a Claude Code Bash result)."""
    if code in (None, 0):
        return text
    return f"Exit code {code}\n{text}" if text else f"Exit code {code}"


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
    return with_exit_code(text, code), failed


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
    # Calls whose result was given (a later record of one is skipped): the latest ones, as the
    # other record of a call comes soon after the first.
    done: RecentSet = field(default_factory=lambda: RecentSet(CALLS_REMEMBERED))
    sessions: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (call, call ts)

    def output(
        self, result: ToolResultEvent, session: str | None, started: str
    ) -> list[ToolResultEvent]:
        """A call's output; `session`: the process it says is still running."""
        call_id = result.tool_use_id
        if call_id in self.done:
            return []  # the end event already gave it
        if session is not None:
            self.held[call_id] = result
            self.sessions[session] = (call_id, started)
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

    def polled(self, session: str, text: str, code: int | None, ts: str) -> list[ToolResultEvent]:
        """A `write_stdin` poll of a held command's process read `text`; with `code`, it saw the
        process exit: the command's result, unless its end event gave it already."""
        call_id, started = self.sessions.get(session, ("", ""))
        held = self.held.get(call_id)
        if held is None:
            return []
        output = held.output + text
        if code is None:
            self.held[call_id] = held.model_copy(update={"output": output})
            return []
        del self.held[call_id], self.sessions[session]
        self.done.add(call_id)
        update = {
            "ts": ts,
            "output": with_exit_code(output, code),
            "is_error": code != 0,
            "duration_ms": ms_between(started, ts),
        }
        return [held.model_copy(update=update)]

    def unfinished(self) -> list[ToolResultEvent]:
        """The held outputs, when their turn closes with no end: shown, said to be unfinished,
        with no duration (the wall time was only how long the model waited)."""
        results = []
        for call_id, result in self.held.items():
            note = f"{STILL_RUNNING}\n{result.output}" if result.output else STILL_RUNNING
            results.append(result.model_copy(update={"output": note, "duration_ms": None}))
            self.done.add(call_id)
        self.held.clear()
        self.sessions.clear()
        return results
