"""`sidemirror` command line."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from aiohttp import web

from sidemirror import __version__
from sidemirror.app import create_app
from sidemirror.clients.ingest import EXIT_HELP as INGEST_EXIT_HELP
from sidemirror.core.debug_trace import path_problem
from sidemirror.core.durable import WriteFailed, write_all
from sidemirror.core.projection import DEFAULT_MAX_CHARS
from sidemirror.hooks import commands as hook_commands
from sidemirror.runtime import (
    PortUnavailable,
    ScrubbedAccessLogger,
    bind_socket,
    configure_logging,
    resolve_token,
)
from sidemirror.runtime_file import (
    UntrustedRuntimeFile,
    default_runtime_dir,
    prepare_runtime_dir,
    read_runtime_file,
    write_runtime_file,
)
from sidemirror.settings import (
    Settings,
    default_claude_dirs,
    default_codex_dir,
    default_data_dir,
    unique_dirs,
)
from sidemirror.web.connections import (
    FD_RESERVE,
    MAX_CONNECTIONS,
    ConnectionGuard,
    GuardedSockSite,
)

logger = logging.getLogger("sidemirror")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sidemirror", description=__doc__)
    parser.add_argument("--version", action="version", version=f"sidemirror {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the companion server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (not recommended)"
    )
    serve.add_argument(
        "--port", type=int, help="bind exactly this port (default: first free of 47470-47479)"
    )
    serve.add_argument(
        "--claude-dir",
        action="append",
        type=Path,
        default=[],
        help="Claude projects dir (repeatable; default: the standard ones)",
    )
    serve.add_argument(
        "--codex-dir", type=Path, help="Codex home (default $CODEX_HOME or ~/.codex)"
    )
    serve.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    serve.add_argument("--data-dir", type=Path, default=None)
    serve.add_argument("--runtime-dir", type=Path, default=None)
    serve.add_argument("--demo", action="store_true", help="add a labelled demo session")
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
    serve.add_argument("--extension-id", action="append", default=[])
    serve.add_argument(
        "--pairing-code",
        action="store_true",
        help="pairing always needs a code from `sidemirror pair`, even where the OS shows "
        "which user owns a connection",
    )
    serve.add_argument(
        "--decision-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long a Claude Code permission request waits for the panel's decision",
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])

    for name, help_text in (
        ("status", "show the running server"),
        ("token", "print the token"),
        ("pair", "print a one-time code to pair the extension (typed into its popup)"),
    ):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--runtime-dir", type=Path, default=None)
        if name == "status":
            p.add_argument("--json", action="store_true")

    ingest = sub.add_parser(
        "ingest", help="send stdin NDJSON to the running server", epilog=INGEST_EXIT_HELP
    )
    ingest.add_argument("--workspace", default=os.getcwd())
    ingest.add_argument("--format", default="auto")
    ingest.add_argument("--session")
    ingest.add_argument("--runtime-dir", type=Path, default=None)

    cdp = sub.add_parser("observe-cdp", help="report a debuggable Chrome's activity")
    cdp.add_argument("--cdp", default="http://127.0.0.1:9222", help="Chrome's debugging URL")
    cdp.add_argument("--workspace", help="workspace directory to file the activity under")
    cdp.add_argument("--runtime-dir", type=Path, default=None)

    tap = sub.add_parser(
        "acp-tap", help="proxy an ACP agent's stdio and mirror its session (-- AGENT_CMD...)"
    )
    tap.add_argument("--workspace", default=None, help="default: the cwd of session/new")
    tap.add_argument("--runtime-dir", type=Path, default=None)
    tap.add_argument("agent_cmd", nargs=argparse.REMAINDER)

    from sidemirror.clients import forward

    forward.add_parser(sub)
    hook_commands.add_parsers(sub)
    return parser


def raise_fd_limit() -> int | None:
    """Raise the open-file soft limit to the hard limit, and return it: every SSE client and
    followed file holds a descriptor, and the common soft default (1,024) is a few busy panels
    away. None where the OS has no such limit."""
    try:
        import resource  # Unix only
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            logger.warning("cannot raise the open-file limit: %s", exc)
    return None if soft == resource.RLIM_INFINITY else soft


def connection_cap(fd_limit: int | None) -> int:
    """Connections admitted at once. Half the descriptors left after the server's own files
    (followed files, journals, logs): asyncio accepts connections in bursts of the listen
    backlog before any is admitted or evicted, so the other half absorbs the bursts and the
    sockets of evicted connections not yet closed. Reaching the cap is never "too many open
    files"."""
    if fd_limit is None:
        return MAX_CONNECTIONS
    return max(16, min(MAX_CONNECTIONS, (fd_limit - FD_RESERVE) // 2))


def settings_from_args(args: argparse.Namespace) -> Settings:
    claude_dirs = unique_dirs(args.claude_dir or default_claude_dirs())
    return Settings(
        host=args.host,
        port=args.port,
        allow_remote=args.allow_remote,
        claude_dirs=claude_dirs,
        codex_dir=args.codex_dir or default_codex_dir(),
        max_chars=args.max_chars,
        data_dir=args.data_dir or default_data_dir(),
        runtime_dir=args.runtime_dir or default_runtime_dir(),
        demo=args.demo,
        debug_events_jsonl=args.debug_events_jsonl,
        debug_replay=args.debug_replay,
        extension_ids=tuple(args.extension_id),
        log_level=args.log_level,
        pairing_code=args.pairing_code,
        decision_timeout_s=args.decision_timeout,
    )


PROBE_BYTES = 64 << 10  # less free space than this under the data dir counts as a full disk


def data_dir_writable(data_dir: Path) -> bool:
    """Whether the data dir can take a write (it is created if missing). A server that cannot
    store what it is sent must not start: it says why in one line instead."""
    probe = data_dir / f".probe-{os.getpid()}"
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            write_all(fd, bytes(PROBE_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except (OSError, WriteFailed) as exc:
        error = exc.error if isinstance(exc, WriteFailed) else exc
        print(
            f"sidemirror: cannot write to the data dir {data_dir}: {error.strerror or error} "
            "(free some space there, or choose another with --data-dir)",
            file=sys.stderr,
        )
        return False
    return True


async def _serve(settings: Settings) -> int:
    if not data_dir_writable(settings.data_dir):
        return 2
    token = resolve_token(settings.token)
    try:
        sock = bind_socket(settings.host, settings.port)
    except PortUnavailable as exc:
        print(f"sidemirror: {exc}", file=sys.stderr)
        return 2
    port = int(sock.getsockname()[1])
    app = create_app(settings, token)
    fd_limit = raise_fd_limit()
    runner = web.AppRunner(
        app,
        access_log_class=ScrubbedAccessLogger,
        handle_signals=False,
        # A client that hangs up cancels its handler: an idle SSE stream waits on its queue and
        # would otherwise hold its subscription (and memory) until the next item or ping.
        handler_cancellation=True,
        shutdown_timeout=2.0,
        keepalive_timeout=75.0,  # an idle kept-alive connection is closed, like a browser's
    )
    await runner.setup()
    site = GuardedSockSite(runner, sock, ConnectionGuard(connection_cap(fd_limit)))
    await site.start()
    runtime = write_runtime_file(
        settings.runtime_dir,
        {"port": port, "pid": os.getpid(), "token": token, "version": __version__},
    )
    print(f"sidemirror {__version__} listening on http://{settings.host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        runtime.unlink(missing_ok=True)
        await runner.cleanup()
    return 0


def _server_info(runtime_dir: Path | None) -> dict[str, Any] | None:
    """The runtime file's content; None if no server runs. Raises `UntrustedRuntimeFile`."""
    return read_runtime_file(runtime_dir or default_runtime_dir())


def _status(args: argparse.Namespace) -> int:
    info = _server_info(args.runtime_dir)
    health: dict[str, Any] | None = None
    if info is not None:
        try:
            url = f"http://127.0.0.1:{info['port']}/health"
            with urllib.request.urlopen(url, timeout=2) as resp:
                health = json.load(resp)
        except (OSError, urllib.error.URLError, ValueError):
            health = None
    if args.json:
        out = {"running": health is not None, "port": info and info.get("port"), "health": health}
        print(json.dumps(out))
    elif health is None:
        print("sidemirror is not running (start it with: sidemirror serve)")
    else:
        print(
            f"sidemirror {health['version']} on port {info and info['port']}: "
            f"{health['workspaces']} workspace(s), {health['parse_errors']} parse error(s), "
            f"up {health['uptime_s']:.0f}s"
        )
        for line in _parse_error_lines(health):
            print(line)
    return 0 if health is not None else 1


def _parse_error_lines(health: dict[str, Any]) -> list[str]:
    """`parse_errors_detail` (newest first) as one line each: which file, where, why."""
    detail = health.get("parse_errors_detail") or []  # absent from older servers
    lines = ["latest parse errors (newest first):"] if detail else []
    for d in detail:
        where = d.get("file") or "(ingested data)"
        if d.get("offset") is not None:
            where += f" at byte {d['offset']}"
        lines.append(f"  {where}: {d.get('reason')}")
    return lines


def _token(args: argparse.Namespace) -> int:
    info = _server_info(args.runtime_dir)
    if info is None:
        print("sidemirror is not running (start it with: sidemirror serve)", file=sys.stderr)
        return 1
    print(info["token"])
    return 0


def _pair(args: argparse.Namespace) -> int:
    info = _server_info(args.runtime_dir)
    if info is None:
        print("sidemirror is not running (start it with: sidemirror serve)", file=sys.stderr)
        return 1
    request = urllib.request.Request(
        f"http://127.0.0.1:{info['port']}/api/pair/code",
        method="POST",
        headers={"Authorization": f"Bearer {info['token']}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            answer = json.load(resp)
    except (OSError, ValueError) as exc:
        print(f"sidemirror pair: the server did not give a code: {exc}", file=sys.stderr)
        return 1
    minutes = int(answer["expires_in"]) // 60
    print(f"Pairing code: {answer['code']}")
    print(f"Type it into the Sidemirror popup within {minutes} minutes; it works once.")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except UntrustedRuntimeFile as exc:
        # Another user's (or a writable) runtime file could hand us a token of their server.
        print(f"sidemirror {args.command}: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        if not _is_loopback(args.host) and not args.allow_remote:
            print(
                f"sidemirror: refusing to listen on non-loopback host {args.host!r} "
                "without --allow-remote",
                file=sys.stderr,
            )
            return 2
        if args.max_chars < 1:
            print(
                f"sidemirror: --max-chars must be at least 1, got {args.max_chars}", file=sys.stderr
            )
            return 2
        trace = args.debug_events_jsonl
        problem = path_problem(trace) if trace is not None else None
        if problem is not None:
            print(f"sidemirror: --debug-events-jsonl {trace}: {problem}", file=sys.stderr)
            return 2
        configure_logging(args.log_level)
        settings = settings_from_args(args)
        prepare_runtime_dir(settings.runtime_dir)
        return asyncio.run(_serve(settings))
    if args.command in hook_commands.COMMANDS:
        return hook_commands.run(args)
    if args.command == "status":
        return _status(args)
    if args.command == "token":
        return _token(args)
    if args.command == "pair":
        return _pair(args)
    if args.command == "ingest":
        from sidemirror.clients.ingest import run_ingest

        return run_ingest(args, _server_info(args.runtime_dir))
    if args.command == "acp-tap":
        from sidemirror.clients.acp_tap import main as tap_main

        cmd = args.agent_cmd[1:] if args.agent_cmd[:1] == ["--"] else args.agent_cmd
        return tap_main(cmd, args.workspace, args.runtime_dir)
    if args.command == "observe-cdp":
        from sidemirror.clients.observe_cdp import run_observe_cdp

        configure_logging("info")
        return run_observe_cdp(args.cdp, args.runtime_dir or default_runtime_dir(), args.workspace)
    if args.command == "forward":
        from sidemirror.clients import forward

        if args.claude_dir or args.codex_dir:
            claude_dirs, codex_dir = args.claude_dir, args.codex_dir
        else:
            claude_dirs, codex_dir = default_claude_dirs(), default_codex_dir()
        return forward.run_from_args(args, claude_dirs, codex_dir)
    raise AssertionError(args.command)
