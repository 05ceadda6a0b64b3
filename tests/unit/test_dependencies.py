"""Every third-party module the server imports is a dependency that pyproject.toml declares, on
the platforms where it is imported: an undeclared one fails only on a user's machine (psutil off
Linux made agent detection find nothing on macOS, silently)."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server" / "sidemirror"
PLATFORMS = ("linux", "darwin", "win32")
NEWER_STDLIB = {"compression"}  # Python 3.14's (compression.zstd); zstandard before it
# The type checker's own standard-library stubs, imported only under TYPE_CHECKING.
TYPE_STUBS = {"_typeshed"}


def _declared() -> dict[str, set[str]]:
    """Distribution name → the platforms whose plain install pulls it in."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared: dict[str, set[str]] = {}
    for line in project["dependencies"]:
        req = Requirement(line)
        for platform in PLATFORMS:
            env = {"sys_platform": platform, "python_version": "3.11"}
            if req.marker is None or req.marker.evaluate(env):
                declared.setdefault(canonicalize_name(req.name), set()).add(platform)
    return declared


def _imported_modules() -> dict[str, list[str]]:
    """Top-level module → the server files that import it (plain imports and import_module)."""
    found: dict[str, list[str]] = {}
    for path in sorted(SERVER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top not in {"sidemirror", *sys.stdlib_module_names, *NEWER_STDLIB, *TYPE_STUBS}:
                    found.setdefault(top, []).append(str(path.relative_to(ROOT)))
    return found


def test_every_imported_third_party_module_is_declared() -> None:
    declared = _declared()
    distributions = packages_distributions()
    undeclared = {
        module: files
        for module, files in _imported_modules().items()
        if not any(canonicalize_name(d) in declared for d in distributions.get(module, [module]))
    }
    assert not undeclared, f"imported by the server but not in [project] dependencies: {undeclared}"


def test_psutil_is_installed_where_agent_detection_uses_it() -> None:
    # sources/procs.py reads /proc on Linux and asks psutil elsewhere.
    assert {"darwin", "win32"} <= _declared().get("psutil", set())
