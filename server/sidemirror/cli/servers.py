"""What the client commands share: the flags that say which server, and picking it (the one on
the current data dir), saying which when there was a choice, which runtime files were stale,
and refusing a listener that is not that server (server_check.py: `main` exits 2 with the
reason). Standard library only."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sidemirror.runtime_file import ServerChoice, default_runtime_dir, find_server
from sidemirror.server_check import check_server

NOT_RUNNING = "no server is running (start it with: sidemirror serve)"


def add_server_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where running servers leave their runtime files (default: your runtime folder)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the server started with this --data-dir (default: the one on the default data "
        "dir, or the only one running)",
    )


def runtime_dir(args: argparse.Namespace) -> Path:
    return Path(args.runtime_dir) if args.runtime_dir else default_runtime_dir()


def describe(info: dict[str, Any]) -> str:
    return f":{info.get('port')} (pid {info.get('pid')}, data dir {info.get('data_dir')})"


def find_and_report(args: argparse.Namespace, verb: str) -> ServerChoice:
    """`find_server` for this command's flags; each stale runtime file set aside is said on
    stderr, with what to do."""
    choice = find_server(runtime_dir(args), getattr(args, "data_dir", None))
    for stale in choice.stale:
        print(f"sidemirror {verb}: {stale.message()}", file=sys.stderr)
    return choice


def choose_server(
    args: argparse.Namespace, verb: str, *, always_say: bool = False
) -> dict[str, Any] | None:
    """The server this command talks to, or None after saying on stderr why there is none.
    Which one was picked is said on stderr when several run (or always, with `always_say`).
    Raises `UntrustedServer` when what listens on its port is not that server."""
    data_dir = getattr(args, "data_dir", None)
    choice = find_and_report(args, verb)
    if choice.server is None:
        if not choice.servers:
            print(f"sidemirror {verb}: {NOT_RUNNING}", file=sys.stderr)
        else:
            wanted = f"data dir {data_dir}" if data_dir else "the default data dir"
            running = "; ".join(describe(s) for s in choice.servers)
            print(
                f"sidemirror {verb}: no server runs on {wanted}; running: {running}. "
                "Choose one with --data-dir DIR.",
                file=sys.stderr,
            )
        return None
    if always_say or len(choice.servers) > 1:
        print(f"sidemirror {verb}: using the server on {describe(choice.server)}", file=sys.stderr)
    check_server(choice.server)
    return choice.server
