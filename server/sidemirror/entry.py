"""The `sidemirror` console command. `sidemirror hook` runs on every Claude Code tool call, so it
is dispatched here before the CLI (and the web framework it imports) is loaded."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"] and not {"-h", "--help"} & set(sys.argv):
        from sidemirror.hooks.hook_command import run

        return run(sys.argv[2:])
    from sidemirror.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
