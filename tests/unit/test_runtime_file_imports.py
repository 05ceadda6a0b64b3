"""Finding the running server, and the Claude Code hook that does it, cost no third-party import:
the hook runs on every tool call, and importing a web framework there would slow every tool call
of every session."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "modules",
    [
        "sidemirror.runtime_file",
        "sidemirror.sock_diag",
        "sidemirror.cli, sidemirror.hooks.hook_command, sidemirror.hooks.settings_file",
    ],
)
def test_the_hook_path_imports_only_the_standard_library(modules: str) -> None:
    probe = (
        "import sys; before = set(sys.modules); "
        f"import {modules}; import sidemirror.runtime_file as r; "
        "r.read_runtime_file(r.default_runtime_dir()); "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(sorted(new - set(sys.stdlib_module_names)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['sidemirror']"
