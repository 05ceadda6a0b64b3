"""The test tree keeps one harness: conftest.py files only wire fixtures, no test imports a
helper from a conftest, and the server launcher, the port pickers and the wait loop are
written once, in tests/harness/. Read with `ast`, so a new test file breaking the rule fails
here before its helper is copied again."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.harness.paths import ROOT

TESTS = ROOT / "tests"
HARNESS = TESTS / "harness"
# Names that, defined anywhere else in the tree, are a second copy of a harness helper.
HARNESS_ONLY = {
    "free_port", "port_free", "quiet_port", "range_port", "parked_port", "free_range",
    "wait_until", "wait_for", "until", "Server", "ServerExited", "clean_env", "run_cli",
}  # fmt: skip


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _where(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else path.name


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
    return False


def conftest_imports(path: Path) -> list[str]:
    """The imports in `path` that name a conftest module."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.module else [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [f"{_where(path)}:{node.lineno}" for n in names if n.split(".")[-1] == "conftest"]
    return found


def conftest_helpers(path: Path) -> list[str]:
    """What a conftest.py defines that is neither a fixture nor a pytest hook."""
    extra = []
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not (_is_fixture(node) or node.name.startswith("pytest_")):
                extra.append(f"def {node.name}")
        elif isinstance(node, ast.ClassDef):
            extra.append(f"class {node.name}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            extra.append(f"{ast.unparse(node).split('=')[0].strip()} =")
    return [f"{_where(path)}: {e}" for e in extra]


def second_copies(path: Path) -> list[str]:
    """Module-level definitions of a harness helper's name, or a `sidemirror serve` command line
    built by hand, outside tests/harness."""
    tree = _tree(path)
    found = [
        f"{_where(path)}:{node.lineno}: {node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.name in HARNESS_ONLY
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if any(
                a == "sidemirror" and b == "serve" for a, b in zip(words, words[1:], strict=False)
            ):
                found.append(f"{_where(path)}:{node.lineno}: a `sidemirror serve` command")
    return found


def test_no_test_imports_from_a_conftest() -> None:
    assert [hit for p in _python_files() for hit in conftest_imports(p)] == []


def test_conftest_files_only_wire_fixtures() -> None:
    conftests = [p for p in _python_files() if p.name == "conftest.py"]
    assert conftests, "no conftest.py found: the walk is wrong"
    assert [hit for p in conftests for hit in conftest_helpers(p)] == []


def test_the_harness_helpers_are_written_once() -> None:
    outside = [
        p for p in _python_files() if HARNESS not in p.parents and p.name != Path(__file__).name
    ]
    assert [hit for p in outside for hit in second_copies(p)] == []


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    """Each check finds a planted offence, so an empty list above means none."""
    planted = tmp_path / "test_planted.py"
    planted.write_text(
        "from tests.server.conftest import AUTH\n"
        "import tests.e2e.conftest\n"
        "class Server: ...\n"
        "def free_port(): ...\n"
        "async def until(check): ...\n"
        "CMD = [sys.executable, '-m', 'sidemirror', 'serve', '--port', '1']\n"
    )
    conftest = tmp_path / "conftest.py"
    conftest.write_text(
        "import pytest\nTOKEN = 'x'\ndef helper(): ...\n@pytest.fixture\ndef ok(): ...\n"
        "def pytest_configure(config): ...\n"
    )
    assert conftest_imports(planted) == ["test_planted.py:1", "test_planted.py:2"]
    assert conftest_helpers(conftest) == ["conftest.py: TOKEN =", "conftest.py: def helper"]
    kinds = [h.split(": ", 1)[1] for h in second_copies(planted)]
    assert kinds == ["Server", "free_port", "until", "a `sidemirror serve` command"]
