"""The native messaging host Chrome starts for the extension (`python -m sidemirror.native_host`,
through the launcher that `sidemirror extension install-host` writes).

Chrome passes the caller's origin (`chrome-extension://ID/`) as the first argument; a caller
that is not one of the allowed extensions gets an error and nothing else, whatever the host
manifest says. One message is understood:

    {"type": "pair", "port": 47470}        (port: the server the extension found; optional)
 →  {"ok": true, "port", "server_id", "token", "panel"}
 |  {"ok": false, "error": {"code", "message"}}

The answer comes from the running server's own files: its runtime file (port, token, data dir;
trusted only when it is ours, runtime_file.py) and its data dir (server id, panel credential).
The host never talks to the server: the extension checks the server's identity proof itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, BinaryIO

from sidemirror.native_host.framing import FramingError, read_message, write_message
from sidemirror.panel_credential import NoPanelCredential, read_panel_credential
from sidemirror.runtime_file import UntrustedRuntimeFile, default_runtime_dir, scan_runtime_dir

ORIGIN_PREFIX = "chrome-extension://"
SERVER_ID_FILE = "server_id"  # web/about.py (not imported: it pulls in the package version)


class HostConfig:
    """What the launcher tells the host: the extension ids it answers, where servers leave
    their runtime files. A plain class: the host must start in milliseconds."""

    __slots__ = ("allowed_ids", "runtime_dirs")

    def __init__(self, allowed_ids: list[str], runtime_dirs: list[Path]) -> None:
        self.allowed_ids = allowed_ids
        self.runtime_dirs = runtime_dirs


def parse_args(argv: list[str]) -> tuple[HostConfig, str | None]:
    """`--allow ID` and `--runtime-dir DIR` (each repeatable, from the launcher), then what
    Chrome adds: the caller's origin (and on Windows `--parent-window=N`, ignored)."""
    allowed: list[str] = []
    dirs: list[Path] = []
    origin: str | None = None
    args = iter(argv)
    for arg in args:
        if arg == "--allow":
            allowed.append(next(args, ""))
        elif arg == "--runtime-dir":
            dirs.append(Path(next(args, "")))
        elif arg.startswith(ORIGIN_PREFIX) and origin is None:
            origin = arg
    default = default_runtime_dir()
    if default not in dirs:
        dirs.append(default)  # where a server started from this environment would be
    return HostConfig([a for a in allowed if a], dirs), origin


def caller_allowed(origin: str | None, allowed_ids: list[str]) -> bool:
    return origin is not None and origin in {f"{ORIGIN_PREFIX}{i}/" for i in allowed_ids}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def _server_for(port: object, runtime_dirs: list[Path]) -> dict[str, Any] | None:
    """The live server on `port` (any, when no port is asked: the newest)."""
    found: list[dict[str, Any]] = []
    for folder in runtime_dirs:
        found += scan_runtime_dir(folder)[0]  # live servers only: stale files are ignored
    if port is None:
        return found[-1] if found else None
    return next((s for s in reversed(found) if s.get("port") == port), None)


def pair_answer(message: dict[str, Any], config: HostConfig) -> dict[str, Any]:
    port = message.get("port")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool)):
        return _error("bad_request", "port must be a number")
    try:
        server = _server_for(port, config.runtime_dirs)
    except UntrustedRuntimeFile as exc:
        return _error("untrusted_runtime_file", str(exc))
    except OSError as exc:  # a runtime folder this user cannot read is not this user's
        return _error("not_our_server", f"cannot read the runtime folder: {exc}")
    if server is None:
        where = f"on port {port}" if port is not None else "at all"
        return _error("not_our_server", f"no Sidemirror server of this user runs {where}")
    data_dir = Path(str(server.get("data_dir", "")))
    try:
        panel = read_panel_credential(data_dir)
        server_id = (data_dir / SERVER_ID_FILE).read_text(encoding="ascii").strip()
    except (NoPanelCredential, OSError, UnicodeDecodeError) as exc:
        return _error("no_credential", f"the server on port {server.get('port')}: {exc}")
    return {
        "ok": True,
        "port": server.get("port"),
        "server_id": server_id,
        "token": server.get("token"),
        "panel": panel,
    }


def answer(message: dict[str, Any], config: HostConfig) -> dict[str, Any]:
    if message.get("type") == "pair":
        return pair_answer(message, config)
    return _error("unknown_message", f"unknown message type: {message.get('type')!r}")


def serve(argv: list[str], stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer each message until Chrome closes the pipe (one for sendNativeMessage)."""
    config, origin = parse_args(argv)
    if not caller_allowed(origin, config.allowed_ids):
        write_message(stdout, _error("forbidden_origin", f"{origin!r} may not use this host"))
        return 1
    while True:
        try:
            message = read_message(stdin)
        except FramingError as exc:
            write_message(stdout, _error("bad_message", str(exc)))
            return 1
        if message is None:
            return 0
        write_message(stdout, answer(message, config))


def main() -> int:
    return serve(sys.argv[1:], sys.stdin.buffer, sys.stdout.buffer)
