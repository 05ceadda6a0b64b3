"""The quick commands stay quick: `sidemirror --version`, `status` and `token` import nothing but
the standard library (the server, aiohttp and pydantic are imported only by the commands that
need them), and every command and flag has help text."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from sidemirror.cli import COMMANDS, build_parser
from sidemirror.cli.forward import FRAME_KIB_MAX
from sidemirror.cli.ingest import EXIT_NO_SERVER
from sidemirror.cli.serve import DEFAULT_MAX_CHARS_HELP
from sidemirror.clients.forward import CHUNK
from sidemirror.clients.ingest import EXIT_UNREACHABLE
from sidemirror.core.projection import DEFAULT_MAX_CHARS


@pytest.mark.parametrize("argv", [["--version"], ["status"], ["token"], ["url"], ["--help"]])
def test_quick_commands_import_only_the_standard_library(tmp_path: Path, argv: list[str]) -> None:
    runtime = ["--runtime-dir", str(tmp_path)] if argv[0][0] != "-" else []
    probe = (
        "import sys; before = set(sys.modules); from sidemirror.cli import main\n"
        f"try: main({[*argv, *runtime]!r})\n"
        "except SystemExit: pass\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - set(sys.stdlib_module_names)), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stderr.strip().splitlines()[-1] == "['sidemirror']"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_and_flag_has_help() -> None:
    commands = _subparsers(build_parser())
    assert set(commands) == set(COMMANDS)
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, parser in commands.items()
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert not missing


def test_help_texts_say_the_real_defaults() -> None:
    assert DEFAULT_MAX_CHARS_HELP.startswith(f"default {DEFAULT_MAX_CHARS}")
    assert EXIT_NO_SERVER == EXIT_UNREACHABLE
    assert FRAME_KIB_MAX == CHUNK >> 10
