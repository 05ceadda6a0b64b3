"""`sidemirror pair`: a one-time code for the popup, where the OS cannot show who owns a
connection (or the server runs with --pairing-code)."""

from __future__ import annotations

import argparse
import json
import sys

from sidemirror.cli.servers import add_server_args, choose_server


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pair = sub.add_parser(
        "pair", help="print a one-time code to pair the extension (typed into its popup)"
    )
    add_server_args(pair)


def run(args: argparse.Namespace) -> int:
    import urllib.request  # here: building the parser does not pay for http and ssl

    info = choose_server(args, "pair")
    if info is None:
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
