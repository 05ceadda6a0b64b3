"""The house plan holds: every module imports, imports form no cycle and point down the layers,
docs/architecture.md's tree is the tree on disk, and no file cites a document outside the repo.

Imports are read with `ast` (every `import`, at any depth, counts), so a cycle hidden behind a
function-level import is caught too.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sidemirror

from tests.harness.paths import ROOT

PACKAGE = ROOT / "server" / "sidemirror"

# Each top-level part of the server and the layer it stands on: a module may import only from
# its own part or from a lower layer. `core` imports nothing else of ours but the package face.
LAYERS: dict[str, int] = {
    "__init__": -1,  # the package face (`__version__`, `PROTOCOL_VERSION`): imports nothing
    "core": 0,
    "runtime_file": 1,  # finding the running server: standard library only (the hook reads it)
    "listen_socket": 1,  # the port, bound before the server is imported: standard library only
    "data_dir": 1,  # the data dir claimed and checked before the server is imported: the same
    "token_store": 1,  # the token kept in the data dir, read by `serve` and `token --rotate`
    "server_check": 1,  # is the port's listener our server? The hook runs it: stdlib only
    "loopback_http": 0,  # HTTP to our server without http.client (hook, status line): stdlib only
    "sock_diag": 0,  # socket owners from the kernel (netlink): stdlib only, nothing of ours
    "panel_credential": 1,  # the credential only the extension gets: standard library only
    "hook_secret": 1,  # what Claude Code's HTTP hooks send (hooks install writes it): stdlib only
    "native_host": 2,  # Chrome native messaging pairing (Chrome starts it): standard library only
    "settings": 2,
    "forward_files": 2,  # the forward socket's path and token, shared by `serve` and `token`
    "log_filter": 2,  # redaction of every log line, installed by runtime.py
    "index": 2,  # the embedded SQLite index (file metadata, full-text search)
    "sources": 3,
    "runtime": 3,  # port, token and access log of the running server
    "hooks": 2,  # `sidemirror hook` and its settings-file entries: standard library only
    "statusline": 3,  # `sidemirror statusline` and its setting, beside hooks: stdlib only
    "activity": 4,
    "attention": 4,  # live session states, held permission requests
    "ingest": 4,
    "web": 5,
    "mcp": 6,
    "clients": 6,
    "export": 4,  # a session as a file: the CLI reads it over HTTP, the export route (web) from the store
    "app": 7,
    "gen_protocol": 7,
    "cli": 8,  # the `sidemirror` command: a table of commands, one module each
    "__main__": 9,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The modules of ours that `name` imports (resolving relative imports and `from x import
    module`)."""
    known = _modules()
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    return {name: _imports(name, path) for name, path in _modules().items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_imports() -> None:
    failed = {}
    for info in pkgutil.walk_packages(sidemirror.__path__, "sidemirror."):
        if info.name.endswith("__main__"):
            continue  # runs the CLI on import
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - the test reports whatever breaks an import
            failed[info.name] = f"{type(exc).__name__}: {exc}"
    assert not failed


def test_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_imports_point_down_the_layers() -> None:
    upward = []
    for module, targets in _graph().items():
        part = _part(module)
        assert part in LAYERS, f"{module}: new top-level part {part!r}; give it a layer"
        for target in targets:
            other = _part(target)
            if other != part and LAYERS[other] >= LAYERS[part]:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that do not point down: " + ", ".join(sorted(upward))


def test_core_imports_no_other_part() -> None:
    outside = {
        f"{m} -> {t}"
        for m, targets in _graph().items()
        if _part(m) == "core"
        for t in targets
        if _part(t) not in ("core", "__init__")
    }
    assert not outside


def test_agent_packages_do_not_import_each_other() -> None:
    agents = ("claude", "codex", "acp")
    crossing = []
    for module, targets in _graph().items():
        mine = next((a for a in agents if module.startswith(f"sidemirror.sources.{a}")), None)
        for target in targets:
            theirs = next((a for a in agents if target.startswith(f"sidemirror.sources.{a}")), None)
            if mine and theirs and mine != theirs:
                crossing.append(f"{module} -> {target}")
    assert not crossing, "shared code belongs in sources/common.py or core/: " + ", ".join(crossing)


def _tree_block() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The tree", 1)[1]
    return section.split("```", 2)[1].strip("\n").splitlines()


def _documented_tree() -> dict[str, list[str]]:
    """Folder (relative to the repo) -> the names listed on its line(s). A line whose first word
    ends with `/` opens a folder nested by indentation; a line with no folder word continues the
    folder above it; `#` starts a comment."""
    tree: dict[str, list[str]] = {}
    path: list[tuple[int, str]] = []
    current = ""
    for line in _tree_block():
        indent = len(line) - len(line.lstrip())
        words = line.split("#", 1)[0].split()
        if words and words[0].endswith("/"):
            while path and path[-1][0] >= indent:
                path.pop()
            path.append((indent, words[0]))
            current = "".join(p for _, p in path)
            tree.setdefault(current, []).extend(words[1:])
        elif words:
            tree.setdefault(current, []).extend(words)
    return tree


def test_architecture_tree_matches_the_server_folders() -> None:
    tree = _documented_tree()
    server = {k: v for k, v in tree.items() if k.startswith("server/sidemirror/")}
    on_disk = {
        f"server/sidemirror/{d.relative_to(PACKAGE).as_posix()}/".replace("/./", "/")
        for d in [PACKAGE, *PACKAGE.rglob("*")]
        if d.is_dir() and d.name != "__pycache__" and "data" not in d.relative_to(PACKAGE).parts
    }
    assert set(server) - {"server/sidemirror/data/"} == on_disk
    for folder, names in server.items():
        if folder.endswith("data/"):
            continue
        listed = {n.removesuffix(".py") for n in names if not n.endswith("/")}
        present = {p.stem for p in (ROOT / folder).glob("*.py") if p.stem != "__init__"}
        assert listed == present, (
            f"{folder}: not documented {present - listed}, gone {listed - present}"
        )


def test_architecture_tree_names_only_what_exists() -> None:
    for folder, names in _documented_tree().items():
        if folder.startswith("server/sidemirror/"):
            continue  # checked exactly above
        assert (ROOT / folder).is_dir(), folder
        for name in names:
            target = ROOT / folder / name
            assert target.exists(), f"docs/architecture.md names {folder}{name}, which is not there"


@pytest.mark.parametrize("needle", ["DESIGN" + ".md", "DESIGN" + " §"])
def test_no_file_cites_a_document_outside_the_repository(needle: str) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    exempt = {"tests/unit/test_layout.py"}  # this test
    citing = []
    for name in tracked:
        if name in exempt or name.startswith("tests/fixtures/") or name.endswith(".png"):
            continue
        path = ROOT / name
        if path.is_file() and needle in path.read_text(encoding="utf-8", errors="replace"):
            citing.append(name)
    assert not citing


def test_help_texts_cite_no_outside_document() -> None:
    def help_of(*words: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "sidemirror", *words, "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    top = help_of()
    commands = re.search(r"\{([\w,-]+)\}", top)
    assert commands is not None, top
    for text in [top, *(help_of(c) for c in commands.group(1).split(","))]:
        assert "usage:" in text and "DESIGN" not in text
