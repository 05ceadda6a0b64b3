"""`sidemirror hook`: the command Claude Code runs on each hook event (standard library only).

It reads the event's JSON on stdin, finds the running server through the runtime file and
POSTs the event to `/api/hooks/claude` (`--agent codex`: Codex's events, `/api/hooks/codex`),
once the listener on the port has shown it is that server (server_check.py: the socket's
owner, and a proof of the token that sends no token).
What the server answers under `output` is printed as the hook's JSON output (only a
PermissionRequest gets one: the user's decision). Whatever goes wrong — no server, a stale
runtime file, a listener that is not our server, a refused request, bad input — it prints
nothing on stdout and exits 0, so Claude Code behaves exactly as if the hook were not installed;
why goes to stderr, which Claude Code shows in its debug output.

It runs on every tool call of every session, so it must start in milliseconds: it imports
nothing but the standard library (tests/unit/hooks/test_hook_imports.py), and talks HTTP with
loopback_http.py rather than `http.client` (which loads `ssl` and `email`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sidemirror.runtime_file import UntrustedRuntimeFile, default_runtime_dir, find_server
from sidemirror.server_check import UntrustedServer, checked_loopback

TYPE_CHECKING = False  # `typing` is a module import of its own: the hook runs on every tool call
if TYPE_CHECKING:
    from sidemirror.loopback_http import LoopbackConnection

MAX_INPUT = 4 << 20  # a hook event with a large tool input (a Write of a big file) fits
# A PermissionRequest waits for the user's decision (the server's --decision-timeout, 120 s by
# default; Claude Code stops the hook at the timeout `hooks install` gives it). Other events
# are answered at once: if the server stalls, give up quickly rather than slow the agent.
DECISION_WAIT_S = 3600.0
EVENT_WAIT_S = 2.0
RUNTIME_DIR_ENV = "SIDEMIRROR_RUNTIME_DIR"
AGENTS = frozenset({"claude", "codex"})  # each has its route: /api/hooks/<agent>


def _option(argv: list[str], name: str) -> str | None:
    """`NAME VALUE` or `NAME=VALUE` in argv (no parser: it would cost the hook's start)."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _runtime_dir(argv: list[str]) -> Path:
    """`--runtime-dir DIR` (tests, a second server) or $SIDEMIRROR_RUNTIME_DIR, else the
    default folder."""
    given = _option(argv, "--runtime-dir")
    if given is not None:
        return Path(given)
    env = os.environ.get(RUNTIME_DIR_ENV)
    return Path(env) if env else default_runtime_dir()


def _event_name(body: bytes) -> str:
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return ""
    name = data.get("hook_event_name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


def post_event(
    conn: LoopbackConnection, token: str, body: bytes, wait_s: float, agent: str = "claude"
) -> object:
    """POST the event on `conn` (where the server proved itself); the server's `output` (None
    when it has nothing to say)."""
    import json

    if conn.sock is not None:
        conn.sock.settimeout(wait_s)  # a PermissionRequest waits for the user's decision
    conn.request(
        "POST",
        f"/api/hooks/{agent}",
        body=body,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Host": f"127.0.0.1:{conn.port}",
        },
    )
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        return None
    answer = json.loads(data)
    return answer.get("output") if isinstance(answer, dict) else None


def _say(problem: object) -> None:
    print(f"sidemirror hook: {problem}", file=sys.stderr)  # shown in Claude Code's debug view


def run(argv: list[str]) -> int:
    """The hook; always 0 (a non-zero exit would show as a hook error in Claude Code)."""
    agent = _option(argv, "--agent") or "claude"
    if agent not in AGENTS:
        _say(f"unknown agent {agent!r}")
        return 0
    try:
        choice = find_server(_runtime_dir(argv))
    except UntrustedRuntimeFile as exc:
        _say(exc)
        return 0
    except OSError:
        return 0
    for stale in choice.stale:
        _say(stale.message())
    info = choice.server
    if info is None:
        return 0
    port, token = info.get("port"), info.get("token")
    if not isinstance(port, int) or not isinstance(token, str):
        return 0
    body = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(body) > MAX_INPUT or not body.strip():
        return 0
    wait_s = DECISION_WAIT_S if _event_name(body) == "PermissionRequest" else EVENT_WAIT_S
    try:  # before the token or the event leaves, on the connection they will use
        conn = checked_loopback(info, timeout=EVENT_WAIT_S)
    except UntrustedServer as exc:
        _say(exc)
        return 0
    try:
        output = post_event(conn, token, body, wait_s, agent)
    except (OSError, ValueError):  # a timeout, a drop, bad JSON (loopback_http.py)
        return 0
    finally:
        conn.close()
    if output:
        import json

        sys.stdout.write(json.dumps(output) + "\n")
        sys.stdout.flush()
    return 0
