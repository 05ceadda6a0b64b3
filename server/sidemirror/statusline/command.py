"""`sidemirror statusline run [--wrap CMD]`: Claude Code's status line command.

Claude Code runs it after each assistant message (and on a few UI changes), with the session's
JSON on stdin, and shows what it prints. It prints a line first, always: the output of the
user's previous status line command (`--wrap`, run with the same stdin and environment), or a
short line of its own. Only then does it report the JSON to the running server, from a child
process it leaves behind: the status line never waits for the server, whether it is down (a
refused connection), slow or hung. The report goes where `sidemirror hook` sends events, after
the same check that the listener is our server (server_check.py).

Standard library only, like the hook: it runs after every message of every session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from sidemirror.hooks.hook_command import _runtime_dir
from sidemirror.runtime_file import UntrustedRuntimeFile, find_server
from sidemirror.server_check import UntrustedServer, checked_loopback

MAX_INPUT = 1 << 20  # the status line JSON is a few kilobytes
WRAP_TIMEOUT_S = 10.0  # Claude Code cancels a run when the next update comes anyway
REPORT_WAIT_S = 2.0  # the child's limit: nobody waits for it
REPORT_PATH = "/api/statusline/claude"


def _wrapped(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--wrap" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--wrap="):
            return arg.split("=", 1)[1]
    return None


def _get(data: object, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def own_line(body: bytes) -> str:
    """`Opus · context 8% · $0.01 · 5h 24% · 7d 41%`, from what Claude Code gave."""
    import json

    try:
        data = json.loads(body)
    except ValueError:
        data = {}
    parts = [str(_get(data, "model", "display_name") or "Claude")]
    percent = _get(data, "context_window", "used_percentage")
    if isinstance(percent, int | float):
        parts.append(f"context {percent:.0f}%")
    cost = _get(data, "cost", "total_cost_usd")
    if isinstance(cost, int | float):
        parts.append(f"${cost:.2f}")
    for name, label in (("five_hour", "5h"), ("seven_day", "7d")):
        used = _get(data, "rate_limits", name, "used_percentage")
        if isinstance(used, int | float):
            parts.append(f"{label} {used:.0f}%")
    return " · ".join(parts)


def _print_wrapped(command: str, body: bytes) -> int:
    """Run the user's own status line command as Claude Code would (a shell, the same stdin
    and environment) and pass on what it prints and its exit status."""
    try:
        done = subprocess.run(
            command, shell=True, input=body, capture_output=True, timeout=WRAP_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"sidemirror statusline: {command!r} failed: {exc}", file=sys.stderr)
        sys.stdout.write(own_line(body) + "\n")
        return 0
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    return done.returncode


def report(body: bytes, argv: list[str]) -> None:
    """POST the status line JSON to the running server, if there is one that proves itself."""
    try:
        info = find_server(_runtime_dir(argv)).server
    except (UntrustedRuntimeFile, OSError):
        return
    if info is None or not isinstance(info.get("token"), str):
        return
    try:
        conn = checked_loopback(info, timeout=REPORT_WAIT_S)
    except (UntrustedServer, ValueError, OSError):
        return
    try:
        conn.request(
            "POST",
            REPORT_PATH,
            body=body,
            headers={
                "Authorization": f"Bearer {info['token']}",
                "Content-Type": "application/json",
                "Host": f"127.0.0.1:{conn.port}",
            },
        )
        conn.getresponse().read()
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def _report_in_the_background(body: bytes, argv: list[str]) -> None:
    """Report from a child in its own session, with no tie to Claude Code's pipes, so the
    status line is shown as soon as this process exits (and a cancelled run leaves the report
    going). Where there is no fork, report here within `REPORT_WAIT_S`."""
    if not hasattr(os, "fork"):
        report(body, argv)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() != 0:
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        report(body, argv)
    finally:
        os._exit(0)


def run(argv: list[str]) -> int:
    body = sys.stdin.buffer.read(MAX_INPUT + 1)
    wrapped = _wrapped(argv)
    if wrapped:
        status = _print_wrapped(wrapped, body)
    else:
        sys.stdout.write(own_line(body) + "\n")
        status = 0
    sys.stdout.flush()
    if body.strip() and len(body) <= MAX_INPUT:
        _report_in_the_background(body, argv)
    return status
