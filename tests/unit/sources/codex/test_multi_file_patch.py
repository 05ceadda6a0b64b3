"""A Codex `apply_patch` of several files: every file gets its own diff, in the patch's order.

No recorded rollout we hold has a patch of more than one file, so the patch is written in the
format Codex's own tool instructions give (`*** Begin Patch`, `*** Add File:`, `*** Update
File:` with `@@` sections and an optional `*** Move to:`, `*** Delete File:`, `*** End Patch`),
inside the `custom_tool_call` line a recorded rollout uses for apply_patch (tests/unit/sources/
codex/test_parser.py's SESSION, from Codex 0.12x).
"""

from __future__ import annotations

from typing import Any

from sidemirror.core.models import ToolUseEvent
from sidemirror.core.projection import Projector
from sidemirror.sources.diffs import apply_hunks

from tests.unit.sources.codex.test_parser import SESSION, parse

PATCH = "\n".join(
    [
        "*** Begin Patch",
        "*** Add File: docs/notes.md",
        "+# Notes",
        "+",
        "+First line.",
        "*** Update File: src/app.py",
        "@@ def main():",
        "     args = parse()",
        "-    run(args)",
        "+    run(args, verbose=True)",
        "@@ def parse():",
        "-    return {}",
        "+    return {'verbose': False}",
        "*** Update File: src/old_name.py",
        "*** Move to: src/new_name.py",
        "@@",
        "-OLD = 1",
        "+NEW = 1",
        "*** Delete File: src/unused.py",
        "*** End Patch",
        "",
    ]
)


def with_patch(patch: str) -> list[dict[str, Any]]:
    lines = []
    for record in SESSION:
        payload = record["payload"]
        if payload.get("type") == "custom_tool_call" and payload.get("name") == "apply_patch":
            record = {**record, "payload": {**payload, "input": patch}}
        lines.append(record)
    return lines


def patch_item(patch: str) -> ToolUseEvent:
    _parser, items = parse(with_patch(patch))
    (item,) = [i for i in items if isinstance(i, ToolUseEvent) and i.name == "apply_patch"]
    return item


def test_every_file_of_a_patch_gets_its_hunks() -> None:
    item = patch_item(PATCH)
    assert item.diffs is not None
    paths = [d.path for d in item.diffs]
    assert paths == ["docs/notes.md", "src/app.py", "src/old_name.py", "src/unused.py"]
    assert item.diff == item.diffs[0]  # `diff` stays the first file, as before
    notes, app, moved, deleted = item.diffs
    assert (notes.added, notes.removed) == (3, 0)
    assert apply_hunks("", notes.hunks) == "# Notes\n\nFirst line.\n"  # a file: lines end
    assert (app.added, app.removed, len(app.hunks)) == (2, 2, 2)
    assert apply_hunks("    args = parse()\n    run(args)", app.hunks[:1]) == (
        "    args = parse()\n    run(args, verbose=True)"
    )
    assert app.hunks[1].lines == ["-    return {}", "+    return {'verbose': False}"]
    assert (moved.added, moved.removed) == (1, 1)
    assert (deleted.added, deleted.removed, deleted.hunks) == (0, 0, [])


def test_a_patch_of_one_file_keeps_its_single_diff_form() -> None:
    item = patch_item("*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n")
    assert item.diffs is None and item.diff is not None and item.diff.path == "a.py"
    assert "diffs" not in item.model_dump(mode="json")  # absent, not null: the wire form is v1's


def test_each_file_is_capped_like_one_diff_and_the_whole_item_has_them_all() -> None:
    big = "\n".join(["*** Begin Patch", "*** Add File: a.txt"] + ["+a" * 50] * 40)
    big += "\n" + "\n".join(["*** Add File: b.txt"] + ["+b" * 50] * 40 + ["*** End Patch"])
    item = patch_item(big)
    shown = Projector(max_chars=500).to_dict(item)
    assert [d["path"] for d in shown["diffs"]] == ["a.txt", "b.txt"]
    assert all(d["truncated"] for d in shown["diffs"])
    assert all(d["added"] == 40 for d in shown["diffs"])  # the counts stay the whole change's
    assert sum(len(h["lines"]) for d in shown["diffs"] for h in d["hunks"]) < 40
    whole = item.model_dump(mode="json")
    assert [sum(len(h["lines"]) for h in d["hunks"]) for d in whole["diffs"]] == [40, 40]
