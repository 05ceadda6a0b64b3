"""`sidemirror ingest`: stdin NDJSON (`claude -p --output-format stream-json`, `codex exec
--json`, ACP) to the running server; the exit status mirrors the run (clients/ingest.py)."""

from __future__ import annotations

import argparse
import os

from sidemirror.cli.servers import add_server_args, choose_server

EXIT_HELP = (
    "exit status: 0 the run finished (or its format reports no outcome), 1 it failed, "
    "2 no server was reached or it refused the request, 3 it was stopped (cancelled, "
    "interrupted, or cut off before its end)"
)
EXIT_NO_SERVER = 2  # the same as clients.ingest.EXIT_UNREACHABLE (a test holds them equal)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = sub.add_parser(
        "ingest", help="send stdin NDJSON to the running server", epilog=EXIT_HELP
    )
    ingest.add_argument(
        "--workspace",
        default=os.getcwd(),
        metavar="DIR",
        help="the workspace (project directory) to file the session under (default: the cwd)",
    )
    ingest.add_argument(
        "--format",
        default="auto",
        help="the input's format: stream-json, codex-exec, acp or events (default: auto, "
        "told from the first lines)",
    )
    ingest.add_argument(
        "--session", metavar="ID", help="the session id (default: the one the input carries)"
    )
    add_server_args(ingest)


def run(args: argparse.Namespace) -> int:
    info = choose_server(args, "ingest", always_say=True)
    if info is None:
        return EXIT_NO_SERVER
    from sidemirror.clients.ingest import run_ingest

    return run_ingest(args, info)
