"""`sidemirror observe-cdp`: report what a Chrome started with --remote-debugging-port does
(clients/observe_cdp.py)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cdp = sub.add_parser("observe-cdp", help="report a debuggable Chrome's activity")
    cdp.add_argument(
        "--cdp",
        default="http://127.0.0.1:9222",
        metavar="URL",
        help="Chrome's debugging URL (default http://127.0.0.1:9222)",
    )
    cdp.add_argument(
        "--workspace", metavar="DIR", help="workspace directory to file the activity under"
    )
    cdp.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the running server's runtime file is (default: your runtime folder)",
    )


def run(args: argparse.Namespace) -> int:
    from sidemirror.clients.observe_cdp import run_observe_cdp
    from sidemirror.runtime import configure_logging
    from sidemirror.runtime_file import default_runtime_dir

    configure_logging("info")
    return run_observe_cdp(args.cdp, args.runtime_dir or default_runtime_dir(), args.workspace)
