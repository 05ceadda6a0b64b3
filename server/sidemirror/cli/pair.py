"""`sidemirror pair`: a one-time code for the popup, where the browser cannot reach the native
messaging host (`sidemirror extension install-host` was not run, another browser or profile).

Minting a code needs the panel credential, which this command reads from the server's data dir
(panel_credential.py): a process that holds only the runtime-file token cannot mint one."""

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
    from pathlib import Path

    from sidemirror.panel_credential import PANEL_HEADER, NoPanelCredential, read_panel_credential

    info = choose_server(args, "pair")
    if info is None:
        return 1
    try:
        panel = read_panel_credential(Path(str(info.get("data_dir"))))
    except NoPanelCredential as exc:
        print(f"sidemirror pair: no panel credential to mint a code with: {exc}", file=sys.stderr)
        return 1
    request = urllib.request.Request(
        f"http://127.0.0.1:{info['port']}/api/pair/code",
        method="POST",
        headers={"Authorization": f"Bearer {info['token']}", PANEL_HEADER: panel},
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
