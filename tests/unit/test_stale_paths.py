"""No comment, docstring or doc names a repository file that does not exist: a module that moves
(the Claude modules went into `sources/claude/`, the CLI module became a package) leaves its
old name behind in prose that no checker reads, and the reader who follows it finds nothing.

A name counts as found when a tracked file's path is it or ends with it (`web/peer.py`,
`peer.py`), or, for `./` and `../` names, when it resolves from the naming file's folder.
Fenced code blocks in Markdown are example data (transcripts, API answers), not references;
CHANGELOG.md names what was removed.
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATH = re.compile(
    r"(?<![\w/.~$}*>-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w-][\w.-]*\.(?:py|js|mjs|md|sh|toml|html|css))"
    r"\b(?![\w/-])"
)
# Other projects' files, named as such: the agents' own instruction files, a framework, and a
# file of the claude-code-log peer the benchmarks measure.
NOT_OURS = {"CLAUDE.md", "AGENTS.md", "Next.js", "live_update.js", "config.toml"}
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def _python_prose(source: str) -> Iterator[str]:
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc


def _js_comments(source: str) -> Iterator[str]:
    """Comments outside string and template literals (regex literals are rare enough here)."""
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c in "'\"`":
            i += 1
            while i < n and source[i] != c:
                i += 2 if source[i] == "\\" else 1
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            yield source[i:end]
            i = end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            yield source[i:end]
            i = end
        else:
            i += 1


def _prose(rel: str) -> Iterator[str]:
    source = (ROOT / rel).read_text(encoding="utf-8")
    if rel.endswith(".md"):
        yield FENCE.sub("", source)
    elif rel.endswith(".py"):
        yield from _python_prose(source)
    else:
        yield from _js_comments(source)


def _exists(name: str, rel: str, tracked: set[str]) -> bool:
    if name.startswith(("./", "../")):
        return os.path.normpath(os.path.join(os.path.dirname(rel), name)) in tracked
    return name in tracked or any(path.endswith("/" + name) for path in tracked)


def test_every_repository_path_named_in_prose_exists() -> None:
    files = _tracked()
    tracked = set(files)
    stale: list[str] = []
    for rel in files:
        if not rel.endswith((".py", ".md", ".js", ".mjs")) or "/vendor/" in rel:
            continue
        if rel == "CHANGELOG.md":
            continue  # history: it names files that are gone
        if rel.startswith("tests/fixtures/") or not (ROOT / rel).exists():
            continue  # recorded transcripts are data; a file deleted but not yet staged
        for text in _prose(rel):
            for match in PATH.finditer(text):
                name = match.group(1)
                if name not in NOT_OURS and not _exists(name, rel, tracked):
                    stale.append(f"{rel}: {name}")
    assert not stale, "names of files that are not in the repository:\n" + "\n".join(stale)
