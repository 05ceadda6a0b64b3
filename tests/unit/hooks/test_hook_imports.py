"""The commands an agent runs on every event (`hook`) or message (`statusline run`) are run
before the CLI builds its parser, which would import every command module (and the web framework
behind some): they load only the standard library and their own modules. The import proof of
the hook's own modules is in tests/unit/test_runtime_file_imports.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Runs `sidemirror ARGS…`, then reports on stderr: the exit code, the top-level modules it loaded
# from outside the standard library, and whether any CLI command module was loaded.
PROBE = (
    "import sys; before = set(sys.modules)\n"
    "sys.argv = ['sidemirror', *sys.argv[1:]]\n"
    "from sidemirror.cli import main; code = main()\n"
    "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
    "print(code, sorted(new - set(sys.stdlib_module_names)),"
    " any(m.startswith('sidemirror.cli.') for m in sys.modules), file=sys.stderr)"
)
STATUS_INPUT = '{"session_id": "s", "model": {"display_name": "Opus"}}'


@pytest.mark.parametrize(
    ("command", "stdin", "printed"),
    [(["hook"], "", ""), (["statusline", "run"], STATUS_INPUT, "Opus\n")],
    ids=["hook", "statusline"],
)
def test_the_per_event_commands_load_only_the_standard_library(
    tmp_path: Path, command: list[str], stdin: str, printed: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *command, "--runtime-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        input=stdin,
    )
    assert done.stdout == printed  # no server: the hook says nothing, the line still prints
    assert done.stderr.strip().splitlines()[-1] == "0 ['sidemirror'] False"
