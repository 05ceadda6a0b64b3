"""The `sidemirror` command runs `hook` before it builds the CLI's parser, which would import
every command module (and the web framework behind some); the import proof of the hook's own
modules is in tests/unit/test_runtime_file_imports.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_command_runs_the_hook_before_loading_the_cli(tmp_path: Path) -> None:
    probe = (
        "import sys; sys.argv = ['sidemirror', 'hook', '--runtime-dir', sys.argv[1]]; "
        "from sidemirror.cli import main; code = main(); "
        "print(code, 'aiohttp' in sys.modules, "
        "any(m.startswith('sidemirror.cli.') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    ).stdout
    assert out.strip() == "0 False False"
