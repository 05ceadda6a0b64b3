"""Claude Code HTTP hooks (`"type": "http"`): which transport `hooks install` writes, and our
HTTP hook entries.

Claude Code 2.1.63 added HTTP hooks: it POSTs the hook's JSON to a URL and reads the answer's
body as the hook's output, with no process per event (hooks reference, "HTTP hook fields").
Older versions reject the whole settings file's hooks when one has a type they do not know, so
`--transport auto` writes HTTP hooks only when `claude --version` says 2.1.63 or later, and the
standard-library command hook otherwise (and for other agents). `PermissionRequest` stays a
command hook under every transport (hook_secret.py, `COMMAND_ONLY_EVENTS`).

Standard library only, like the rest of hooks/.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sidemirror.data_dir import last_port
from sidemirror.hook_secret import HOOK_HEADER, HTTP_HOOK_PATH, load_hook_secret

Transport = Literal["http", "command"]
HTTP_SINCE = (2, 1, 63)  # Claude Code's changelog: "Added HTTP hooks"
DEFAULT_PORT = 47470
# Claude Code gives up on an HTTP hook after `timeout` seconds and carries on (a non-blocking
# error). A server that answers takes milliseconds; one that accepted the connection and hangs
# would cost the agent this much per event, so it is short.
HTTP_TIMEOUT_S = 5
VERSION_WAIT_S = 10.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_OUR_URL = re.compile(
    r"^http://(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})" + re.escape(HTTP_HOOK_PATH) + "$"
)


@dataclass(frozen=True)
class HttpTarget:
    """Where our HTTP hooks post, and the secret they send."""

    port: int
    secret: str

    def entry(self) -> dict[str, Any]:
        return {
            "type": "http",
            "url": f"http://127.0.0.1:{self.port}{HTTP_HOOK_PATH}",
            "headers": {HOOK_HEADER: self.secret},
            "timeout": HTTP_TIMEOUT_S,
        }


def target(data_dir: Path, port: int | None = None) -> HttpTarget:
    """The port (given, else the one the server on `data_dir` had last, else the default) and
    that data dir's hook secret (made if it has none yet)."""
    return HttpTarget(port or last_port(data_dir) or DEFAULT_PORT, load_hook_secret(data_dir))


def is_our_http(hook: object) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "http"
        and isinstance(hook.get("url"), str)
        and _OUR_URL.match(hook["url"]) is not None
    )


def http_port(hook: object) -> int | None:
    """The port one of our HTTP hook entries posts to."""
    if not is_our_http(hook):
        return None
    assert isinstance(hook, dict)
    match = _OUR_URL.match(hook["url"])
    return int(match.group(2)) if match else None


def posted_ports(settings: dict[str, Any], secret: str | None = None) -> set[int]:
    """The ports our HTTP hook entries in a settings file's data post to (with `secret`, when
    given: those of one data dir's server)."""
    ports: set[int] = set()
    hooks = settings.get("hooks")
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                port = http_port(hook)
                headers = hook.get("headers") if isinstance(hook, dict) else None
                sent = headers.get(HOOK_HEADER) if isinstance(headers, dict) else None
                if port is not None and (secret is None or sent == secret):
                    ports.add(port)
    return ports


def elsewhere_warning(settings_file: Path, data_dir: Path, port: int) -> str | None:
    """What `serve` says when Claude Code's HTTP hooks for this data dir post to another port
    than the one it listens on: until `hooks install` runs again, those events go to whatever
    listens there (docs/security.md, "HTTP hooks")."""
    import json

    try:
        secret = (data_dir / "hook_secret").read_text(encoding="ascii").strip()
        data = json.loads(settings_file.read_bytes())
    except (OSError, ValueError):
        return None
    if not secret or not isinstance(data, dict):
        return None
    ports = posted_ports(data, secret) - {port}
    if not ports:
        return None
    shown = ", ".join(str(p) for p in sorted(ports))
    return (
        f"warning: Claude Code's HTTP hooks in {settings_file} post to 127.0.0.1:{shown}, but "
        f"this server listens on {port}: run `sidemirror hooks install` (until then those "
        "events go to whatever listens there)"
    )


def claude_version(claude: str | None = None) -> tuple[int, int, int] | None:
    """`claude --version` as numbers; None when Claude Code is not on PATH or does not say."""
    exe = claude or shutil.which("claude")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=VERSION_WAIT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout)
    if match is None:
        return None
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def choose(requested: str, version: tuple[int, int, int] | None) -> tuple[Transport, str]:
    """The transport to install for `--transport requested`, and why (printed to the user)."""
    if requested == "http":
        return "http", "HTTP hooks, as asked (Claude Code 2.1.63 or later needed)"
    if requested == "command":
        return "command", "the command hook, as asked"
    shown = ".".join(map(str, version)) if version else None
    if version is None:
        return "command", (
            "the command hook: `claude --version` did not answer, so HTTP hooks (Claude Code "
            "2.1.63+) could not be checked; `--transport http` chooses them"
        )
    if version >= HTTP_SINCE:
        return "http", f"HTTP hooks: Claude Code {shown} has them (2.1.63+)"
    return "command", f"the command hook: Claude Code {shown} predates HTTP hooks (2.1.63)"
