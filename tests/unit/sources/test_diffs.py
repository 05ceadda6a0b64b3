"""Diffs of edits: hunks applied to the old text give the new text, on real recorded edits and
on generated texts; each format (Edit, MultiEdit, Write, apply_patch, ACP) gives its hunks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.core.models import ToolUseEvent
from sidemirror.core.projection import Projector, full_dict
from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.tools import tool_call_item
from sidemirror.sources.diffs import (
    acp_diff,
    apply_hunks,
    claude_tool_diff,
    patch_diffs,
    text_hunks,
)

from tests.harness.paths import FIXTURES


def recorded_tool_calls(*names: str, paths: list[Path] | None = None) -> Iterator[dict[str, Any]]:
    """Every `tool_use` block named one of `names` in recorded Claude Code transcripts (by
    default all of them)."""
    for path in paths or sorted((FIXTURES / "claude").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not any(f'"name":"{n}"' in line for n in names):
                continue
            message = json.loads(line).get("message") or {}
            for block in message.get("content") or []:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "tool_use" and block.get("name") in names:
                    yield block


def test_recorded_edits_give_hunks_that_turn_the_old_text_into_the_new() -> None:
    edits = list(recorded_tool_calls("Edit", "MultiEdit"))
    assert len(edits) >= 10
    for block in edits:
        args = block["input"]
        pairs = args["edits"] if block["name"] == "MultiEdit" else [args]
        for pair in pairs:
            old, new = redact_text(pair["old_string"]), redact_text(pair["new_string"])
            assert apply_hunks(old, text_hunks(old, new)) == new
        diff = claude_tool_diff(block["name"], args)
        assert diff is not None and diff.path == args["file_path"]
        removed = sum(len(text_hunks(p["old_string"], p["new_string"])) for p in pairs)
        assert len(diff.hunks) == removed and diff.added + diff.removed > 0


def test_a_recorded_write_adds_every_line_of_the_file() -> None:
    writes = list(recorded_tool_calls("Write"))
    assert len(writes) >= 5
    for block in writes:
        content = redact_text(block["input"]["content"])
        diff = claude_tool_diff("Write", block["input"])
        assert diff is not None and diff.removed == 0
        # The file's lines, all added (a final newline ends the last line).
        (hunk,) = diff.hunks
        assert "\n".join(x[1:] for x in hunk.lines) == content.removesuffix("\n")
        assert all(x.startswith("+") for x in hunk.lines)
        assert diff.added == hunk.new_lines == content.count("\n") + (content[-1:] != "\n")


lines = st.lists(st.sampled_from(["a", "b", "c", "", "def f():", "    return 1", "x\r"]))


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_hunks_applied_to_any_old_text_give_the_new_text(old: list[str], new: list[str]) -> None:
    a, b = "\n".join(old), "\n".join(new)
    hunks = text_hunks(a, b)
    assert apply_hunks(a, hunks) == b
    assert (hunks == []) == (a == b)
    for hunk in hunks:  # the header counts match the lines
        assert hunk.old_lines == sum(1 for x in hunk.lines if x[0] in " -")
        assert hunk.new_lines == sum(1 for x in hunk.lines if x[0] in " +")


def test_a_codex_patch_of_a_recorded_edit_gives_the_same_change() -> None:
    """The recorded Edit written as the `apply_patch` text Codex would send for it."""
    block = next(recorded_tool_calls("Edit"))
    old, new = block["input"]["old_string"], block["input"]["new_string"]
    patch = "\n".join(
        ["*** Begin Patch", f"*** Update File: {block['input']['file_path']}", "@@"]
        + ["-" + x for x in old.split("\n")]
        + ["+" + x for x in new.split("\n")]
        + ["*** Add File: notes/new.md", "+# New", "+", "+text", "*** Delete File: gone.txt"]
        + ["*** End Patch"]
    )
    update, added, deleted = patch_diffs(patch)
    assert update.path == block["input"]["file_path"]
    assert apply_hunks(old, update.hunks) == new
    assert (added.path, added.added, added.removed) == ("notes/new.md", 3, 0)
    assert [x for h in added.hunks for x in h.lines] == ["+# New", "+", "+text"]
    assert (deleted.path, deleted.hunks) == ("gone.txt", [])


def acp_blocks(name: str) -> list[dict[str, Any]]:
    for line in (FIXTURES / "acp" / name).read_text(encoding="utf-8").splitlines():
        if '"type":"diff"' in line:
            update = json.loads(line)
            found = [update]
            while found:
                value = found.pop()
                if isinstance(value, dict):
                    if isinstance(value.get("content"), list) and value.get("toolCallId"):
                        return [b for b in value["content"] if isinstance(b, dict)]
                    found += value.values()
                elif isinstance(value, list):
                    found += value
    raise AssertionError(f"no diff content in {name}")


def test_recorded_acp_diffs_in_both_shapes() -> None:
    # {path, oldText, newText}
    diff = acp_diff(acp_blocks("v1-zed-session-load-replay.jsonl"))
    assert diff is not None and diff.path == "<cwd>/src/app.ts"
    assert apply_hunks("a", diff.hunks) == "b" and (diff.added, diff.removed) == (1, 1)
    # A git patch with the file's own line numbers.
    diff = acp_diff(acp_blocks("edit-with-permission.jsonl"))
    assert diff is not None and diff.path == "<cwd>/src/app.ts"
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (1, 3, 1, 3)
    assert hunk.lines == [" line 1", "-const value = 1;", "+const value = 2;", " line 3"]
    old = "line 1\nconst value = 1;\nline 3\n"
    assert apply_hunks(old, diff.hunks) == "line 1\nconst value = 2;\nline 3\n"


def test_a_secret_in_an_edit_never_reaches_a_hunk_and_long_hunks_are_capped() -> None:
    key = "sk-ant-api03-" + "A" * 90
    old = "\n".join(f"line {n}" for n in range(200))
    new = old.replace("line 5\n", f"line 5\nAPI_KEY={key}\n").replace("line 150", "changed")
    item = tool_call_item(
        "toolu_1", "Edit", {"file_path": "/p/x.py", "old_string": old, "new_string": new}, "", None
    )
    assert isinstance(item, ToolUseEvent) and item.diff is not None
    text = json.dumps(full_dict(item))
    assert key not in text and "changed" in text
    assert (item.diff.added, item.diff.removed) == (2, 1)
    wire = json.loads(Projector(max_chars=60).to_json(item))
    assert wire["diff"]["truncated"] is True
    assert sum(len(x) for h in wire["diff"]["hunks"] for x in h["lines"]) <= 60
    assert (wire["diff"]["added"], wire["diff"]["removed"]) == (2, 1)  # the whole change's
    whole = full_dict(item)["diff"]
    assert whole["truncated"] is False and len(whole["hunks"]) == 2
    # Other tools carry no diff at all (not even null) on the wire.
    read = tool_call_item("toolu_2", "Read", {"file_path": "/p/x.py"}, "", None)
    assert "diff" not in json.loads(Projector().to_json(read))
