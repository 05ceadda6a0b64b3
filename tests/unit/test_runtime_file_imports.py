"""Finding the running server costs no third-party import: the Claude Code hook does it on every
tool call, and importing a web framework there would slow every tool call of every session."""

from __future__ import annotations

import subprocess
import sys


def test_runtime_file_imports_only_the_standard_library() -> None:
    probe = (
        "import sys; before = set(sys.modules); "
        "import sidemirror.runtime_file as r; r.read_runtime_file(r.default_runtime_dir()); "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(sorted(new - set(sys.stdlib_module_names)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['sidemirror']"
