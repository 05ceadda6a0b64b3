"""`sidemirror token` and `sidemirror url`: what a client needs to reach the running server, one
line on stdout (for `$(…)`); an error on stderr and exit status 1 when no server runs, never an
empty line."""

from __future__ import annotations

import argparse

from sidemirror.cli.servers import add_server_args, choose_server


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser(
        "token",
        help="print the running server's token (for the popup, or an MCP client's header)",
        description="Print the token of the server on the current data dir. When no server "
        "runs, print an error on stderr and exit 1 (nothing on stdout).",
    )
    add_server_args(token)
    url = sub.add_parser(
        "url",
        help="print the running server's address, e.g. http://127.0.0.1:47470",
        description="Print the base URL of the server on the current data dir (MCP endpoint: "
        "URL/mcp). When no server runs, print an error on stderr and exit 1.",
    )
    add_server_args(url)


def run(args: argparse.Namespace) -> int:
    info = choose_server(args, args.command)
    if info is None:
        return 1
    if args.command == "url":
        print(f"http://127.0.0.1:{info['port']}")
    else:
        print(info["token"])
    return 0
