"""What an edit changed, as unified hunks: from Claude Code's Edit, MultiEdit, Write and
NotebookEdit inputs, Codex's `apply_patch` text and ACP `diff` content.

The texts are redacted before they are compared, so a secret spread over several lines is
caught whole and no hunk line carries one. Lines are the text split on "\\n" (a final newline
gives a last empty line), so applying the hunks to the old text gives the new text exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from typing import Any

from sidemirror.core.models import DiffHunk, FileDiff
from sidemirror.core.redact import redact_text
from sidemirror.sources.common import as_text

CONTEXT_LINES = 3
# Past this many lines on a side, texts are not matched line by line (quadratic at worst): the
# change is shown as one hunk that replaces the old text with the new.
MATCH_MAX_LINES = 20_000


def split_lines(text: str) -> list[str]:
    return text.split("\n")


def text_hunks(old: str, new: str) -> list[DiffHunk]:
    """Unified hunks (3 lines of context) that turn `old` into `new`."""
    a, b = split_lines(old), split_lines(new)
    if a == b:
        return []
    if max(len(a), len(b)) > MATCH_MAX_LINES:
        return [_hunk(a, b, [("replace", 0, len(a), 0, len(b))])]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return [_hunk(a, b, group) for group in matcher.get_grouped_opcodes(CONTEXT_LINES)]


def _hunk(a: list[str], b: list[str], ops: Iterable[tuple[str, int, int, int, int]]) -> DiffHunk:
    ops = list(ops)
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            lines += [" " + line for line in a[i1:i2]]
            continue
        lines += ["-" + line for line in a[i1:i2]]
        lines += ["+" + line for line in b[j1:j2]]
    i1, i2 = ops[0][1], ops[-1][2]
    j1, j2 = ops[0][3], ops[-1][4]
    # As `diff -u` numbers them: an empty side names the line before it.
    return DiffHunk(
        old_start=i1 + 1 if i2 > i1 else i1,
        old_lines=i2 - i1,
        new_start=j1 + 1 if j2 > j1 else j1,
        new_lines=j2 - j1,
        lines=lines,
    )


def file_diff(path: str, hunks: list[DiffHunk]) -> FileDiff:
    lines = [line for hunk in hunks for line in hunk.lines]
    return FileDiff(
        path=redact_text(path),
        added=sum(1 for line in lines if line.startswith("+")),
        removed=sum(1 for line in lines if line.startswith("-")),
        hunks=hunks,
    )


def edit_diff(path: str, pairs: Iterable[tuple[str, str]]) -> FileDiff:
    """Replacements of `old` by `new` in one file (numbered within each replaced text)."""
    hunks = [h for old, new in pairs for h in text_hunks(redact_text(old), redact_text(new))]
    return file_diff(path, hunks)


def added_diff(path: str, text: str) -> FileDiff:
    """A text written whole (Write, a new notebook cell, an added file): every line added. Its
    lines are the file's lines (a final newline ends the last one, it does not add another)."""
    if not text:
        return file_diff(path, [])
    lines = ["+" + line for line in split_lines(redact_text(text).removesuffix("\n"))]
    return file_diff(path, [DiffHunk(old_start=0, old_lines=0, new_start=1,
                                     new_lines=len(lines), lines=lines)])  # fmt: skip


def claude_tool_diff(name: str, tool_input: Any) -> FileDiff | None:
    """The change a Claude Code (or ACP adapter's) edit tool call asks for; None for others."""
    if not isinstance(tool_input, dict):
        return None
    path = as_text(tool_input.get("file_path")) or as_text(tool_input.get("notebook_path"))
    if name == "Edit":
        old, new = as_text(tool_input.get("old_string")), as_text(tool_input.get("new_string"))
        return edit_diff(path, [(old, new)])
    if name == "MultiEdit":
        edits = tool_input.get("edits")
        pairs = [
            (as_text(e.get("old_string")), as_text(e.get("new_string")))
            for e in (edits if isinstance(edits, list) else [])
            if isinstance(e, dict)
        ]
        return edit_diff(path, pairs)
    if name == "Write":
        return added_diff(path, as_text(tool_input.get("content")))
    if name == "NotebookEdit":
        if tool_input.get("edit_mode") == "delete":
            return file_diff(path, [])
        return added_diff(path, as_text(tool_input.get("new_source")))
    return None


def acp_diff(blocks: Iterable[dict[str, Any]]) -> FileDiff | None:
    """The first `diff` content block of an ACP tool call: `path`, `oldText` (null: a new
    file) and `newText`; or, from adapters that send one, a `patch` in git's format."""
    for block in blocks:
        if block.get("type") != "diff":
            continue
        patch = block.get("patch")
        if isinstance(patch, dict) and isinstance(patch.get("text"), str):
            diffs = unified_diffs(patch["text"])
            if diffs:
                return diffs[0]
            continue
        path, new = as_text(block.get("path")), as_text(block.get("newText"))
        old = block.get("oldText")
        if not isinstance(old, str):
            return added_diff(path, new)
        return file_diff(path, text_hunks(redact_text(old), redact_text(new)))
    return None


def patch_diffs(patch: str) -> list[FileDiff]:
    """Codex `apply_patch` text (`*** Begin Patch` … `*** End Patch`): one diff a file, each
    `@@` section a hunk numbered within its own lines (the patch gives no line numbers)."""
    diffs: list[FileDiff] = []
    path: str | None = None
    added_file = False
    sections: list[list[str]] = []
    body: list[str] = []

    def close() -> None:
        if path is None:
            return
        if body:
            sections.append(list(body))
        if added_file:
            text = "\n".join(line[1:] for s in sections for line in s if line.startswith("+"))
            diffs.append(added_diff(path, text))
        else:
            diffs.append(file_diff(path, [h for s in sections if (h := _section_hunk(s))]))

    for line in redact_text(patch).split("\n"):
        header = _patch_header(line)
        if header is not None:
            close()
            verb, name = header
            path, added_file, sections, body = (name or None), verb == "Add", [], []
            if verb == "Delete" and path is not None:
                diffs.append(file_diff(path, []))
                path = None
            continue
        if path is None or line.startswith("*** "):
            continue  # `*** End Patch`, `*** End of File`, `*** Move to:`
        if line.startswith("@@"):
            if body:
                sections.append(body)
            body = []
        elif line[:1] in ("+", "-", " ") or line == "":
            body.append(line)  # an empty line: blank context, unless it ends the section
    close()
    return diffs


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def unified_diffs(text: str) -> list[FileDiff]:
    """A unified (git) diff's files and hunks, with the line numbers it gives."""
    diffs: list[FileDiff] = []
    path: str | None = None
    hunks: list[DiffHunk] = []
    old_left = new_left = 0  # lines the open hunk's header still promises
    for line in redact_text(text).split("\n"):
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        if old_left > 0 or new_left > 0:
            marker = line[:1] or " "
            if marker in (" ", "-"):
                old_left -= 1
            if marker in (" ", "+"):
                new_left -= 1
            hunks[-1].lines.append(marker + line[1:])
            continue
        header = _HUNK_HEADER.match(line)
        if line.startswith("+++ "):
            if path is not None:
                diffs.append(file_diff(path, hunks))
            name = line[4:].strip()
            path, hunks = (name[2:] if name.startswith("b/") else name), []
        elif header is not None and path is not None:
            old_left = 1 if header.group(2) is None else int(header.group(2))
            new_left = 1 if header.group(4) is None else int(header.group(4))
            hunks.append(DiffHunk(old_start=int(header.group(1)), old_lines=old_left,
                                  new_start=int(header.group(3)), new_lines=new_left,
                                  lines=[]))  # fmt: skip
    if path is not None:
        diffs.append(file_diff(path, hunks))
    return diffs


def _patch_header(line: str) -> tuple[str, str] | None:
    for verb in ("Add", "Update", "Delete"):
        prefix = f"*** {verb} File: "
        if line.startswith(prefix):
            return verb, line[len(prefix) :].strip()
    return None


def _section_hunk(raw: list[str]) -> DiffHunk | None:
    while raw and raw[-1] == "":
        raw = raw[:-1]
    lines = [line or " " for line in raw]
    if not any(line[:1] in ("+", "-") for line in lines):
        return None
    old = sum(1 for line in lines if line[:1] in (" ", "-"))
    new = sum(1 for line in lines if line[:1] in (" ", "+"))
    return DiffHunk(
        old_start=1 if old else 0, old_lines=old, new_start=1 if new else 0, new_lines=new,
        lines=lines,
    )  # fmt: skip


def apply_hunks(old: str, hunks: Iterable[DiffHunk]) -> str:
    """`old` with `hunks` applied (hunks in order, numbered against `old`): the new text. Used
    by tests to check that a diff says exactly what changed."""
    a = split_lines(old)
    out: list[str] = []
    at = 0  # lines of `a` consumed
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        out += a[at:start]
        at = start
        for line in hunk.lines:
            if line[:1] == " ":
                if a[at] != line[1:]:
                    raise ValueError(f"context line {at + 1} differs")
                out.append(a[at])
                at += 1
            elif line[:1] == "-":
                if a[at] != line[1:]:
                    raise ValueError(f"removed line {at + 1} differs")
                at += 1
            else:
                out.append(line[1:])
    return "\n".join(out + a[at:])
