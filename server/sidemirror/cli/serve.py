"""`sidemirror serve`: the companion server's flags, checked before anything heavy is imported
(the server itself starts in `serving.py`)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

    from sidemirror.data_dir import AlreadyRunning
    from sidemirror.web.starting import StartingResponder

DEFAULT_MAX_CHARS_HELP = (
    "default 500"  # core.projection.DEFAULT_MAX_CHARS (a test holds them equal)
)


def _positive_seconds(text: str) -> float:
    """A number of seconds above zero, or a usage error naming what was given."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the companion server (loopback only; one per data dir)",
        description="Run the companion server: it follows your agents' session files and "
        "serves them to the side panel. One server per data dir: a second one on the same "
        "data dir says where the first runs and exits 2.",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (not recommended)"
    )
    serve.add_argument(
        "--port",
        type=int,
        help="bind exactly this port (default: the port it had last time if free, else the "
        "first free of 47470-47479)",
    )
    serve.add_argument(
        "--claude-dir",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="Claude Code projects dir (repeatable; default: $CLAUDE_CONFIG_DIR/projects, "
        "~/.claude/projects, ~/.config/claude/projects)",
    )
    serve.add_argument(
        "--codex-dir",
        type=Path,
        metavar="DIR",
        help="Codex home (default $CODEX_HOME or ~/.codex)",
    )
    serve.add_argument(
        "--max-chars",
        type=int,
        default=None,
        metavar="N",
        help="cut each text field sent to the panel at N characters (the rest on demand; "
        f"{DEFAULT_MAX_CHARS_HELP})",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where journals, caches and the index live (default: ~/.local/share/sidemirror "
        "or your OS's user data folder); a second server needs its own",
    )
    serve.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the runtime file (port, pid, token) for clients is written (default: "
        "$XDG_RUNTIME_DIR/sidemirror, else ~/.cache/sidemirror/run)",
    )
    serve.add_argument(
        "--demo", action="store_true", help="add a labelled demo session (a recorded transcript)"
    )
    serve.add_argument(
        "--debug-events-jsonl",
        type=Path,
        metavar="PATH",
        help="append every event sent (items, partials, status, resets) to PATH, one per line",
    )
    serve.add_argument(
        "--debug-replay",
        action="store_true",
        help="also write the sessions restored at start (not written again by default)",
    )
    serve.add_argument(
        "--extension-id",
        action="append",
        default=[],
        metavar="ID",
        help="also accept this extension ID as an Origin (repeatable; the pinned ID always is)",
    )
    serve.add_argument(
        "--pairing-code",
        action="store_true",
        help="do not look up which OS user owns a connection, as where the OS cannot say "
        "(pairing needs the native messaging host or a code from `sidemirror pair` anyway)",
    )
    serve.add_argument(
        "--decision-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long a Claude Code permission request waits for the panel's decision "
        "(default 120)",
    )
    serve.add_argument(
        "--idle-time",
        type=_positive_seconds,
        default=120.0,
        metavar="SECONDS",
        help="a running or waiting session with no agent process and no write for this long "
        "is idle (default 120)",
    )
    serve.add_argument(
        "--max-hosts",
        type=int,
        default=32,
        metavar="N",
        help="how many machines `sidemirror forward` may mirror here; a new one past N is "
        "refused (default 32)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity on stderr (default info; tokens and tickets are never logged)",
    )
    serve.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (method, path, status, time; never the query string or "
        "headers); off by default: a panel makes several requests a second",
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refusal(args: argparse.Namespace) -> str | None:
    """Why these flags cannot start a server (None: they can)."""
    if not _is_loopback(args.host) and not args.allow_remote:
        return f"refusing to listen on non-loopback host {args.host!r} without --allow-remote"
    if args.max_chars is not None and args.max_chars < 1:
        return f"--max-chars must be at least 1, got {args.max_chars}"
    if args.max_hosts < 0:
        return f"--max-hosts must be 0 or more, got {args.max_hosts}"
    return None


def run(args: argparse.Namespace) -> int:
    refusal = _refusal(args)
    if refusal is not None:
        print(f"sidemirror: {refusal}", file=sys.stderr)
        return 2
    from sidemirror.core.free_memory import limit_heap_growth
    from sidemirror.data_dir import AlreadyRunning, claim_data_dir, last_port, write_problem
    from sidemirror.listen_socket import PortUnavailable, bind_socket
    from sidemirror.runtime_file import default_data_dir

    limit_heap_growth()  # before any thread: a fleet's loads would fragment many heaps
    args.data_dir = args.data_dir or default_data_dir()
    try:
        # Bound before the server is imported: a client that connects while it starts waits.
        sock = bind_socket(args.host, args.port, prefer=last_port(args.data_dir))
    except PortUnavailable as exc:
        print(f"sidemirror: {exc}", file=sys.stderr)
        return 2
    with sock:
        problem = write_problem(args.data_dir)
        if problem is not None:
            print(f"sidemirror: {problem}", file=sys.stderr)
            return 2
        try:
            claim = claim_data_dir(args.data_dir, int(sock.getsockname()[1]))
        except AlreadyRunning as exc:
            print(already_running_message(args, exc), file=sys.stderr)
            return 2
        try:
            with _starting_responder(args, sock) as starting:
                from sidemirror.cli.serving import serve_from_args  # the server: only now

                return serve_from_args(args, sock, starting)
        finally:
            if claim is not None:
                os.close(claim)


def _starting_responder(args: argparse.Namespace, sock: socket.socket) -> StartingResponder:
    """Answers `/health` ("starting") while the server is imported (web/starting.py)."""
    from sidemirror.web.about import load_server_id
    from sidemirror.web.peer import OwnerCache
    from sidemirror.web.rules import extension_origins
    from sidemirror.web.starting import StartingResponder

    return StartingResponder(
        sock,
        server_id=load_server_id(args.data_dir),
        origins=extension_origins(args.extension_id),
        owners=OwnerCache(enabled=not args.pairing_code),  # as the server's (app.py)
    )


def already_running_message(args: argparse.Namespace, exc: AlreadyRunning) -> str:
    """Where the server holding this data dir runs: its lock says (whatever its --runtime-dir);
    a lock from an older version names only its pid, and its runtime file may say more."""
    from sidemirror.runtime_file import default_runtime_dir, find_server

    if exc.port is not None:
        where = f"on :{exc.port} (pid {exc.pid})"
    else:
        runtime_dir = args.runtime_dir or default_runtime_dir()
        info = find_server(runtime_dir, args.data_dir).server  # this data dir's only
        if info is not None:
            where = f"on :{info.get('port')} (pid {info.get('pid')})"
        else:
            where = f"(pid {exc.pid})" if exc.pid else "(its runtime file is not in this folder)"
    return (
        f"sidemirror: already running {where} with the data dir {args.data_dir}; "
        "start a second server with its own --data-dir DIR"
    )
