"""The console command runs `sidemirror hook` without loading the CLI (and the web framework
behind it); the import proof itself is in tests/unit/test_runtime_file_imports.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_console_command_runs_the_hook_before_loading_the_cli(tmp_path: Path) -> None:
    probe = (
        "import sys; sys.argv = ['sidemirror', 'hook', '--runtime-dir', sys.argv[1]]; "
        "import sidemirror.entry as e; code = e.main(); "
        "print(code, 'aiohttp' in sys.modules, 'sidemirror.cli' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
    ).stdout
    assert out.strip() == "0 False False"
