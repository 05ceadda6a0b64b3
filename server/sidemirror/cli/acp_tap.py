"""`sidemirror acp-tap -- AGENT_CMD…`: a transparent stdio proxy between an editor and an ACP
agent that mirrors the session (clients/acp_tap.py)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tap = sub.add_parser(
        "acp-tap", help="proxy an ACP agent's stdio and mirror its session (-- AGENT_CMD...)"
    )
    tap.add_argument(
        "--workspace", default=None, metavar="DIR", help="default: the cwd of session/new"
    )
    tap.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the running server's runtime file is (default: your runtime folder)",
    )
    tap.add_argument("agent_cmd", nargs=argparse.REMAINDER, help="-- then the agent's command")


def run(args: argparse.Namespace) -> int:
    from sidemirror.clients.acp_tap import main as tap_main

    cmd = args.agent_cmd[1:] if args.agent_cmd[:1] == ["--"] else args.agent_cmd
    return tap_main(cmd, args.workspace, args.runtime_dir)
