"""`sidemirror hook` and `sidemirror hooks install|uninstall|status`, a module of the CLI's
`COMMANDS` table: the parsers and what each runs. (`cli.main` runs `hook` before any parser is
built; this parser is for `--help`.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sidemirror.hooks import codex_settings, settings_file
from sidemirror.hooks.hook_command import run as run_hook
from sidemirror.hooks.transport_cli import (
    add_transport_options,
    install_with_transport,
    transport_status,
)

COMMANDS = frozenset({"hook", "hooks"})
AGENTS = ("claude", "codex")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hook = sub.add_parser(
        "hook", help="Claude Code command hook: send the event on stdin to the running server"
    )
    hook.add_argument(
        "--runtime-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the running server's runtime file is (default: $SIDEMIRROR_RUNTIME_DIR, "
        "else the user's runtime folder)",
    )
    hook.add_argument(
        "--agent",
        choices=AGENTS,
        default="claude",
        help="the agent that runs the hook, whose event format it sends (default: claude)",
    )
    hooks = sub.add_parser("hooks", help="add or remove Sidemirror's Claude Code or Codex hooks")
    hooks.add_argument(
        "action",
        choices=["install", "uninstall", "status"],
        help="add the hooks, remove them, or say whether they are installed",
    )
    hooks.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help="edit DIR/.claude/settings.json (Codex: DIR/.codex/hooks.json) instead of the "
        "user's file",
    )
    hooks.add_argument(
        "--agent",
        choices=AGENTS,
        default="claude",
        help="claude: ~/.claude/settings.json (default); codex: ~/.codex/hooks.json",
    )
    add_transport_options(hooks)


def run(args: argparse.Namespace) -> int:
    if args.command == "hook":
        extra = ["--runtime-dir", str(args.runtime_dir)] if args.runtime_dir else []
        return run_hook([*extra, "--agent", args.agent])
    if args.agent == "codex" and args.transport != "auto":
        why = "--transport is for Claude Code (Codex runs commands)"
        print(f"sidemirror hooks: {why}", file=sys.stderr)
        return 2
    if args.agent == "codex":
        path, layout = codex_settings.hooks_path(args.project), codex_settings.CODEX
    else:
        path, layout = settings_file.settings_path(args.project), settings_file.CLAUDE
    try:
        if args.action == "install":
            if args.agent == "codex":  # Codex hooks documentation: non-managed hooks
                print(settings_file.install(path, layout=layout).message)
                print("Codex runs new hooks once you have reviewed and trusted them: it asks.")
            else:  # Claude Code: HTTP hooks where it has them (transport_cli.py)
                print(install_with_transport(path, args).message)
        elif args.action == "uninstall":
            print(settings_file.uninstall(path).message)
        else:
            present, missing = settings_file.status(path, layout)
            if not present:
                print(f"not installed in {path}")
                return 1
            print(f"installed in {path} for {len(present)} of {len(layout.events)} events")
            if missing:
                again = "sidemirror hooks install" + (
                    " --agent codex" if layout.agent == "codex" else ""
                )
                print("missing: " + ", ".join(missing) + f" (run `{again}`)")
            if layout.agent == "claude":
                print(transport_status(path, args))
    except settings_file.SettingsError as exc:
        print(f"sidemirror hooks {args.action}: {exc}", file=sys.stderr)
        return 2
    return 0
