"""`sidemirror` command line: a table of commands, each in its own module.

Starting a command must not cost the import of the server: `sidemirror --version`, `status` and
`token` run in a shell prompt or a `$(…)`, and a Claude Code hook runs on every tool call. So a
command module imports only the standard library at the top (`add_parsers` builds its
arguments) and what the command needs inside `run` (tests/unit/test_cli_imports.py).
"""

from __future__ import annotations

import importlib
import sys

from sidemirror import __version__

TYPE_CHECKING = False  # `typing` is an import of its own, and the hook runs on every tool call
if TYPE_CHECKING:
    import argparse
    from types import ModuleType

# The one registration point: command name → the module that defines it. A module provides
# `add_parsers(sub)` (adds its command(s) to the parser) and `run(args) -> int` (the exit status).
# The order here is the order `sidemirror --help` lists them.
COMMANDS: dict[str, str] = {
    "serve": "sidemirror.cli.serve",
    "status": "sidemirror.cli.status",
    "token": "sidemirror.cli.token",
    "url": "sidemirror.cli.token",
    "pair": "sidemirror.cli.pair",
    "ingest": "sidemirror.cli.ingest",
    "acp-tap": "sidemirror.cli.acp_tap",
    "observe-cdp": "sidemirror.cli.observe_cdp",
    "forward": "sidemirror.cli.forward",
    "extension": "sidemirror.cli.extension",
    "export": "sidemirror.cli.export",
    "hook": "sidemirror.hooks.commands",
    "hooks": "sidemirror.hooks.commands",
    "statusline": "sidemirror.statusline.commands",
}


def _modules() -> list[ModuleType]:
    names = dict.fromkeys(COMMANDS.values())  # each module once, in table order
    return [importlib.import_module(name) for name in names]


def build_parser() -> argparse.ArgumentParser:
    import argparse  # not for the hook, which needs no parser

    parser = argparse.ArgumentParser(
        prog="sidemirror",
        description="Mirror a coding agent's session into Chrome's side panel, live.",
        epilog="`sidemirror COMMAND --help` describes each command and its flags.",
    )
    parser.add_argument("--version", action="version", version=f"sidemirror {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _modules():
        module.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    if args_list[:1] == ["hook"] and not {"-h", "--help"} & set(args_list):
        # Claude Code runs this on every tool call: no parser, no other command module.
        from sidemirror.hooks.hook_command import run as run_hook

        return run_hook(args_list[1:])
    if args_list[:2] == ["statusline", "run"] and not {"-h", "--help"} & set(args_list):
        # Claude Code runs this after every message: no parser either.
        from sidemirror.statusline.command import run as run_statusline

        return run_statusline(args_list[2:])
    if args_list == ["--version"]:  # the quickest answer: no parser, no command module
        print(f"sidemirror {__version__}")
        return 0
    args = build_parser().parse_args(args_list)
    from sidemirror.runtime_file import UntrustedRuntimeFile
    from sidemirror.server_check import UntrustedServer

    module = importlib.import_module(COMMANDS[args.command])
    try:
        return int(module.run(args))
    except (UntrustedRuntimeFile, UntrustedServer) as exc:
        # Another user's (or a writable) runtime file could hand us a token of their server;
        # a port whose server is gone may hold anyone's listener.
        print(f"sidemirror {args.command}: {exc}", file=sys.stderr)
        return 2
