"""`sidemirror token` and `sidemirror url`: what a client needs to reach the running server, one
line on stdout (for `$(…)`); an error on stderr and exit status 1 when no server runs, never an
empty line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sidemirror.cli.servers import add_server_args, choose_server, runtime_dir


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser(
        "token",
        help="print the running server's token (for the popup, or an MCP client's header)",
        description="Print the token of the server on the current data dir. When no server "
        "runs, print an error on stderr and exit 1 (nothing on stdout).",
    )
    token.add_argument(
        "--forward",
        action="store_true",
        help="print the forward token instead: the one `sidemirror forward` needs, which can "
        "send agent files and nothing else (docs/remote.md)",
    )
    add_server_args(token)
    url = sub.add_parser(
        "url",
        help="print the running server's address, e.g. http://127.0.0.1:47470",
        description="Print the base URL of the server on the current data dir (MCP endpoint: "
        "URL/mcp). When no server runs, print an error on stderr and exit 1.",
    )
    url.add_argument(
        "--forward",
        action="store_true",
        help="print the path of the forward socket instead, the one to relay with "
        "`ssh -R REMOTE.sock:PATH` (docs/remote.md)",
    )
    add_server_args(url)


def run(args: argparse.Namespace) -> int:
    info = choose_server(args, args.command)
    if info is None:
        return 1
    if args.forward:
        return _print_forward(args, Path(str(info.get("data_dir", ""))))
    if args.command == "url":
        print(f"http://127.0.0.1:{info['port']}")
    else:
        print(info["token"])
    return 0


def _print_forward(args: argparse.Namespace, data_dir: Path) -> int:
    from sidemirror.forward_files import (
        ForwardTokenError,
        forward_socket_path,
        read_forward_token,
    )

    if args.command == "url":
        print(forward_socket_path(runtime_dir(args), data_dir))
        return 0
    try:
        token = read_forward_token(data_dir)
    except ForwardTokenError as exc:
        print(f"sidemirror token: {exc}", file=sys.stderr)
        return 1
    if token is None:
        print(f"sidemirror token: no forward token in {data_dir} yet", file=sys.stderr)
        return 1
    print(token)
    return 0
