"""`sidemirror hooks install --transport auto|http|command`: the options, the install, and what
`hooks status` says about the transport (http_hooks.py says which is chosen and why)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sidemirror.data_dir import last_port
from sidemirror.hooks import settings_file
from sidemirror.hooks.http_hooks import DEFAULT_PORT, choose, claude_version, posted_ports, target
from sidemirror.runtime_file import default_data_dir


def add_transport_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--transport",
        choices=["auto", "http", "command"],
        default="auto",
        help="install: HTTP hooks (no process per tool call; Claude Code 2.1.63+), the command "
        "hook (`sidemirror hook`, every version), or auto: HTTP when `claude --version` is "
        "2.1.63 or later (default). PermissionRequest is a command hook either way",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        metavar="N",
        help="install: the port HTTP hooks post to (default: the port the server on --data-dir "
        "had last, else 47470)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="install: the server data dir whose hook secret HTTP hooks send (default: the "
        "user's data dir)",
    )


def install_with_transport(path: Path, args: argparse.Namespace) -> settings_file.Outcome:
    transport, why = choose(args.transport, claude_version() if args.transport == "auto" else None)
    print(f"transport: {why}")
    http = None
    if transport == "http":
        http = target(args.data_dir or default_data_dir(), args.port)
        if settings_readable_by_others(path):
            print(
                f"note: {path} is readable by other users; the hook secret in it lets a "
                "process post hook events (nothing else) — see docs/security.md, HTTP hooks"
            )
    return settings_file.install(path, http=http)


def settings_readable_by_others(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & 0o044)
    except OSError:
        return False


def transport_status(path: Path, args: argparse.Namespace) -> str:
    """Which transport the installed entries use (never the secret), and whether the HTTP
    hooks post to the port the server had last."""
    ports = settings_file_ports(path)
    if not ports:
        return "transport: command hook (`sidemirror hook`) for every event"
    shown = ", ".join(str(p) for p in sorted(ports))
    line = f"transport: HTTP hooks to 127.0.0.1:{shown} (PermissionRequest: command hook)"
    current = args.port or last_port(args.data_dir or default_data_dir()) or DEFAULT_PORT
    if current not in ports:
        line += (
            f"; the server's port is now {current}: run `sidemirror hooks install` again, or "
            "the HTTP hooks post to whatever listens there"
        )
    return line


def settings_file_ports(path: Path) -> set[int]:
    return posted_ports(settings_file._read(path)[1])
