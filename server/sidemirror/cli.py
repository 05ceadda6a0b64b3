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
from sidemirror.core.projection import DEFAULT_MAX_CHARS
from sidemirror.runtime import (
    PortUnavailable,
    ScrubbedAccessLogger,
    UntrustedRuntimeFile,
    bind_socket,
    configure_logging,
    prepare_runtime_dir,
    read_runtime_file,
    resolve_token,
    write_runtime_file,
)
from sidemirror.settings import (
    Settings,
    default_claude_dirs,
    default_codex_dir,
    default_data_dir,
    default_runtime_dir,
    unique_dirs,
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
    serve.add_argument("--debug-events-jsonl", type=Path)
    serve.add_argument("--extension-id", action="append", default=[])
    serve.add_argument(
        "--pairing-code",
        action="store_true",
        help="pairing always needs a code from `sidemirror pair`, even where the OS shows "
        "which user owns a connection",
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

    ingest = sub.add_parser("ingest", help="send stdin NDJSON to the running server")
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
    return parser


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
        extension_ids=tuple(args.extension_id),
        log_level=args.log_level,
        pairing_code=args.pairing_code,
    )


async def _serve(settings: Settings) -> int:
    token = resolve_token(settings.token)
    try:
        sock = bind_socket(settings.host, settings.port)
    except PortUnavailable as exc:
        print(f"sidemirror: {exc}", file=sys.stderr)
        return 2
    port = int(sock.getsockname()[1])
    app = create_app(settings, token)
    runner = web.AppRunner(app, access_log_class=ScrubbedAccessLogger, handle_signals=False)
    await runner.setup()
    site = web.SockSite(runner, sock, shutdown_timeout=2.0)
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
    return 0 if health is not None else 1


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
        configure_logging(args.log_level)
        settings = settings_from_args(args)
        prepare_runtime_dir(settings.runtime_dir)
        return asyncio.run(_serve(settings))
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
    raise AssertionError(args.command)
