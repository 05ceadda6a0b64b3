"""`sidemirror statusline run` runs after every message of every session: like the hook, it is
run before the CLI's parser is built and loads only the standard library and its own modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_status_line_loads_only_the_standard_library(tmp_path: Path) -> None:
    probe = (
        "import sys; before = set(sys.modules)\n"
        "sys.argv = ['sidemirror', 'statusline', 'run', '--runtime-dir', sys.argv[1]]\n"
        "from sidemirror.cli import main; code = main()\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(code, sorted(new - set(sys.stdlib_module_names)),"
        " any(m.startswith('sidemirror.cli.') for m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        input='{"session_id": "s", "model": {"display_name": "Opus"}}',
    )
    assert done.stdout == "Opus\n"
    assert done.stderr.strip().splitlines()[-1] == "0 ['sidemirror'] False"
