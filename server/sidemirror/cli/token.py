"""`sidemirror token` and `sidemirror url`: what a client needs to reach the running server, one
line on stdout (for `$(…)`); an error on stderr and exit status 1 when no server runs, never an
empty line. `sidemirror token --rotate` replaces the token kept in the data dir (token_store.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sidemirror.cli.servers import add_server_args, choose_server, find_and_report, runtime_dir


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser(
        "token",
        help="print the running server's token (for the popup, or an MCP client's header)",
        description="Print the token of the server on the current data dir. When no server "
        "runs, print an error on stderr and exit 1 (nothing on stdout). The token is kept in "
        "the data dir across restarts until --rotate replaces it.",
    )
    token.add_argument(
        "--rotate",
        action="store_true",
        help="replace the token kept in the data dir with a new one, print it, and say whether "
        "a running server must restart to use it (the old token works until then)",
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


def rotate(args: argparse.Namespace) -> int:
    from sidemirror.runtime_file import default_data_dir
    from sidemirror.token_store import rotate_token

    data_dir = args.data_dir or default_data_dir()
    try:
        token = rotate_token(data_dir)
    except OSError as exc:
        print(f"sidemirror token: cannot write a new token in {data_dir}: {exc}", file=sys.stderr)
        return 1
    print(token)
    wanted = str(data_dir.expanduser().resolve())
    running = [s for s in find_and_report(args, "token").servers if s.get("data_dir") == wanted]
    for info in running:
        print(
            f"sidemirror token: the server on :{info.get('port')} (pid {info.get('pid')}) still "
            "accepts the old token until it restarts: stop it and run `sidemirror serve` again; "
            "clients that hold the old token then need the new one",
            file=sys.stderr,
        )
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "rotate", False):
        return rotate(args)
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
