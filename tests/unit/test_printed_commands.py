"""Every `sidemirror …` command the README, docs/api.md, the popup and the side panel print is a
command that exists with the flags it is printed with: pasted, it parses (as `--help` shows).
README command 1 and the MCP line are run for real in tests/server/test_readme_commands.py."""

from __future__ import annotations

import re
import shlex

import pytest
from sidemirror.cli import build_parser

from tests.harness.paths import ROOT

SOURCES = [
    ROOT / "README.md",
    ROOT / "docs" / "api.md",
    *sorted((ROOT / "extension").rglob("*.js")),
    *sorted((ROOT / "extension").rglob("*.html")),
]
# `sidemirror serve --port 47471 --demo`, in code spans, code blocks and JS strings.
PRINTED = re.compile(r"(?<![\w/.-])sidemirror (?:[a-z][\w-]*)(?: (?:--?[\w-]+|[\w./:$\"{}@~-]+))*")


PROSE = ("sidemirror into ",)  # "Installing sidemirror into …/.venv": output, not a command
# The README's placeholders, as a user fills them in.
FILLED = {"P": "47475", "DIR": "/tmp/d", "FILE": "/tmp/x.zip", "N": "5", "ID": "abc",
          "URL": "http://127.0.0.1:47470", "NAME": "devbox"}  # fmt: skip


def _printed() -> list[str]:
    found: set[str] = set()
    for path in SOURCES:
        for line in path.read_text(encoding="utf-8").splitlines():
            for match in PRINTED.finditer(line):
                if not match.group(0).startswith(PROSE):
                    found.add(match.group(0).strip())
    return sorted(found)


def _argv(printed: str) -> list[str]:
    words = shlex.split(printed.replace("$(", "").replace(")", ""), posix=True)
    out = []
    for word in words[1:]:
        if word in ("|", "&&", "#") or word.startswith(("…", "...")):
            break
        out.append(FILLED.get(word, word))
    return out


@pytest.mark.parametrize("printed", _printed())
def test_each_printed_command_parses(printed: str) -> None:
    argv = _argv(printed)
    if argv and argv[0] not in build_parser()._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
        pytest.fail(f"{printed!r}: no such command")
    if len(argv) == 1:  # a command named in prose ("### sidemirror forward"): it exists
        argv = [argv[0], "--help"]
    if argv[-1:] == ["--"] or "acp-tap" in argv[:1]:
        argv = [a for a in argv if a != "--"][:1]  # the agent command after -- is the user's
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:  # --help exits 0: it exists
        if exc.code != 0:
            pytest.fail(f"{printed!r} does not parse (exit {exc.code})")


def test_the_commands_people_are_told_to_type_are_among_them() -> None:
    printed = {_argv(p)[0] for p in _printed() if _argv(p)}
    assert {"serve", "status", "token", "url", "pair", "ingest", "acp-tap", "observe-cdp",
            "forward", "extension"} <= printed  # fmt: skip
