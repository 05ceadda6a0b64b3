"""`sidemirror forward`: send this machine's agent files to a server elsewhere (clients/forward.py,
docs/remote.md). The flags are here so that `sidemirror --help` does not import the forwarder."""

from __future__ import annotations

import argparse
from pathlib import Path

FRAME_KIB_MAX = 4096  # clients.forward.CHUNK in KiB (a test holds them equal)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "forward",
        help="send this machine's agent files to a server elsewhere (see docs/remote.md)",
    )
    p.add_argument(
        "--to",
        required=True,
        metavar="unix:PATH",
        help="the server's forward socket as relayed to this machine, e.g. "
        "unix:$HOME/.sidemirror-forward.sock (`ssh -R`, see docs/remote.md)",
    )
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="a file (mode 600) holding the server's forward token (`sidemirror token "
        "--forward`); default: $SIDEMIRROR_FORWARD_TOKEN",
    )
    p.add_argument(
        "--label",
        default=None,
        help="this machine's name in the panel (default: the host name)",
    )
    p.add_argument(
        "--claude-dir",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="Claude Code projects dir to send (repeatable; default: the standard ones)",
    )
    p.add_argument(
        "--codex-dir", type=Path, metavar="DIR", help="Codex home to send (default: ~/.codex)"
    )
    p.add_argument(
        "--frame-kib",
        type=int,
        default=FRAME_KIB_MAX,
        metavar="N",
        help=f"largest frame sent, in KiB (default {FRAME_KIB_MAX}; smaller frames suit slow "
        "links)",
    )


def run(args: argparse.Namespace) -> int:
    from sidemirror.clients import forward
    from sidemirror.settings import default_claude_dirs, default_codex_dir

    args.label = args.label or forward.default_label()
    if args.claude_dir or args.codex_dir:
        claude_dirs, codex_dir = args.claude_dir, args.codex_dir
    else:
        claude_dirs, codex_dir = default_claude_dirs(), default_codex_dir()
    return forward.run_from_args(args, claude_dirs, codex_dir)
