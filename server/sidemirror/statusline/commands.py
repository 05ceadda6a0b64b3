"""`sidemirror statusline run|install|uninstall|status`, a module of the CLI's `COMMANDS` table.
(`cli.main` runs `statusline run` before any parser is built; this parser is for `--help`.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sidemirror.hooks.settings_file import SettingsError, settings_path
from sidemirror.statusline import settings
from sidemirror.statusline.command import run as run_statusline

COMMANDS = frozenset({"statusline"})


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "statusline",
        help="Claude Code status line that also reports the agent's own context, cost and "
        "rate-limit figures to the server",
    )
    parser.add_argument(
        "action",
        choices=["run", "install", "uninstall", "status"],
        help="run: the status line command itself (Claude Code runs it); install/uninstall/"
        "status: its setting in Claude Code's settings file",
    )
    parser.add_argument(
        "--wrap",
        default=None,
        metavar="CMD",
        help="run: the user's previous status line command, run and printed as before",
    )
    parser.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="run: where the running server's runtime file is (default: "
        "$SIDEMIRROR_RUNTIME_DIR, else the user's runtime folder)",
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help="edit DIR/.claude/settings.json instead of ~/.claude/settings.json",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "run":
        argv = ["--wrap", args.wrap] if args.wrap else []
        argv += ["--runtime-dir", str(args.runtime_dir)] if args.runtime_dir else []
        return run_statusline(argv)
    path = settings_path(args.project)
    try:
        if args.action == "install":
            outcome, before = settings.install(path)
            print(outcome.message)
            if before.command:
                print(f"your status line was: {before.command}")
                print("it stays: Sidemirror runs it and prints what it prints")
            elif before.setting is not None:
                print(f"your status line setting was: {before.setting} (it had no command)")
            else:
                print("you had no status line: Sidemirror prints its own")
        elif args.action == "uninstall":
            print(settings.uninstall(path).message)
        else:
            ours, before = settings.status(path)
            if not ours:
                print(f"not installed in {path}")
                return 1
            wraps = f", running your status line: {before.command}" if before.command else ""
            print(f"installed in {path}{wraps}")
    except SettingsError as exc:
        print(f"sidemirror statusline {args.action}: {exc}", file=sys.stderr)
        return 2
    return 0
