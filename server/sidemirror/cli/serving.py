"""Running the server for `sidemirror serve` on the socket bound (and the data dir claimed) by
cli/serve.py: the app built, the socket taken over from the starting responder, the runtime file
written, until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import socket
import sys

from aiohttp import web

from sidemirror import __version__
from sidemirror.app import create_app, once_listening
from sidemirror.core.debug_trace import path_problem
from sidemirror.core.projection import DEFAULT_MAX_CHARS
from sidemirror.data_dir import remember_port
from sidemirror.listen_socket import BACKLOG
from sidemirror.runtime import ScrubbedAccessLogger, configure_logging, resolve_token
from sidemirror.runtime_file import (
    default_data_dir,
    default_runtime_dir,
    prepare_runtime_dir,
    write_runtime_file,
)
from sidemirror.settings import (
    Settings,
    default_claude_dirs,
    default_codex_dir,
    unique_dirs,
)
from sidemirror.web.connections import (
    FD_RESERVE,
    MAX_CONNECTIONS,
    ConnectionGuard,
    GuardedSockSite,
)
from sidemirror.web.identify import SERVER_ID
from sidemirror.web.starting import StartingResponder
from sidemirror.web.state import APP_STATE

logger = logging.getLogger("sidemirror")
GIL_SWITCH_S = 0.001  # see tune_interpreter
# Container objects allocated (less those freed) between two young-generation collections;
# CPython's default is 700 (see tune_interpreter).
GC_YOUNG_OBJECTS = 20_000


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
        max_chars=args.max_chars or DEFAULT_MAX_CHARS,
        data_dir=args.data_dir or default_data_dir(),
        runtime_dir=args.runtime_dir or default_runtime_dir(),
        demo=args.demo,
        debug_events_jsonl=args.debug_events_jsonl,
        debug_replay=args.debug_replay,
        extension_ids=tuple(args.extension_id),
        log_level=args.log_level,
        access_log=args.access_log,
        pairing_code=args.pairing_code,
        decision_timeout_s=args.decision_timeout,
        idle_time_s=args.idle_time,
        max_hosts=args.max_hosts,
    )


async def _serve(settings: Settings, sock: socket.socket, starting: StartingResponder) -> int:
    token = resolve_token(settings.token, settings.data_dir)
    port = int(sock.getsockname()[1])
    app = create_app(settings, token)
    fd_limit = raise_fd_limit()
    runner = web.AppRunner(
        app,
        access_log_class=ScrubbedAccessLogger,
        # None turns aiohttp's access log off (`--access-log` turns it on).
        access_log=logging.getLogger("aiohttp.access") if settings.access_log else None,
        handle_signals=False,
        # A client that hangs up cancels its handler: an idle SSE stream waits on its queue and
        # would otherwise hold its subscription (and memory) until the next item or ping.
        handler_cancellation=True,
        shutdown_timeout=2.0,
        keepalive_timeout=75.0,  # an idle kept-alive connection is closed, like a browser's
    )
    await runner.setup()
    starting.stop()  # from here the server answers on the socket itself
    owners = app[APP_STATE].guard.owners  # one lookup per connection, shared with the app's rules
    guard = ConnectionGuard(connection_cap(fd_limit), owners=owners)
    site = GuardedSockSite(runner, sock, guard, backlog=BACKLOG)
    await site.start()
    once_listening(app)
    # Before the runtime file exists: a SIGTERM sent as soon as "listening on" is printed (a
    # script, a test) used to find Python's default handler and leave the file behind.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # The server_id lets clients check that the port still holds this server (server_check.py);
    # the file also gets this process's pid, start time and boot id (runtime_file.py).
    runtime = write_runtime_file(
        settings.runtime_dir,
        {"port": port, "token": token, "version": __version__, "server_id": app[SERVER_ID]},
        settings.data_dir,
    )
    try:
        remember_port(settings.data_dir, port)
        print(f"sidemirror {__version__} listening on http://{settings.host}:{port}", flush=True)
        _warn_if_hooks_post_elsewhere(settings, port)
        await stop.wait()
    finally:
        runtime.unlink(missing_ok=True)
        await runner.cleanup()
    return 0


def _warn_if_hooks_post_elsewhere(settings: Settings, port: int) -> None:
    from sidemirror.hooks.http_hooks import elsewhere_warning
    from sidemirror.hooks.settings_file import settings_path

    warning = elsewhere_warning(settings_path(None), settings.data_dir, port)
    if warning:
        print(warning, file=sys.stderr, flush=True)


def tune_interpreter() -> None:
    """The interpreter's pauses, bounded for a server whose every event waits on one loop.

    A thread running Python (the search writer's batch, a reader's parse) keeps the GIL until it
    blocks or the switch interval runs out: at the default 5 ms, an event that arrived meanwhile
    waited that long on the event loop. 1 ms bounds the wait at a small cost.

    The cyclic garbage collector stops every thread while it runs. At 400 lines a second (the
    fleet bench) the server keeps what it reads (held items, indexes, caches), so the young
    generation filled every ~0.2 s and was collected with nothing to free (a line's garbage is
    freed by reference counting), 3–10 ms each time, and the older generations after it, up to
    54 ms: 357 ms of pauses in 70 s, at the tail of append→SSE. Collected every 20,000 objects
    instead: one young collection a minute, 5–11 ms, and none of the older generations."""
    sys.setswitchinterval(GIL_SWITCH_S)
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_OBJECTS, middle, old)


def serve_from_args(
    args: argparse.Namespace, sock: socket.socket, starting: StartingResponder
) -> int:
    """Run the server on `sock`, bound and listening already (listen_socket.py), where
    `starting` answers until the server takes over."""
    trace = args.debug_events_jsonl
    problem = path_problem(trace) if trace is not None else None
    if problem is not None:
        print(f"sidemirror: --debug-events-jsonl {trace}: {problem}", file=sys.stderr)
        return 2
    configure_logging(args.log_level)
    tune_interpreter()
    settings = settings_from_args(args)
    prepare_runtime_dir(settings.runtime_dir)
    return asyncio.run(_serve(settings, sock, starting))
