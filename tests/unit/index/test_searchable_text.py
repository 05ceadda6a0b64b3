"""What of an item the search index holds: every file of a patch of several, not the first."""

from __future__ import annotations

from sidemirror.core.models import DiffHunk, FileDiff, ToolUseEvent
from sidemirror.index.search_feed import searchable_text


def _diff(path: str, added: str) -> FileDiff:
    hunk = DiffHunk(old_start=1, old_lines=1, new_start=1, new_lines=1, lines=["-old", f"+{added}"])
    return FileDiff(path=path, added=1, removed=1, hunks=[hunk])


def test_every_file_of_a_multi_file_patch_is_searchable() -> None:
    first, second = _diff("src/a.py", "alpha_marker"), _diff("src/b.py", "beta_marker")
    call = ToolUseEvent(
        tool_use_id="t",
        name="apply_patch",
        input="*** Begin Patch",
        diff=first,
        diffs=[first, second],
    )
    text = searchable_text(call)
    assert "src/a.py" in text and "alpha_marker" in text
    assert "src/b.py" in text and "beta_marker" in text
    assert text.count("alpha_marker") == 1  # `diff` is the first of `diffs`: not indexed twice


def test_a_single_file_edit_is_searchable_by_its_diff() -> None:
    call = ToolUseEvent(tool_use_id="t", name="Edit", input="{}", diff=_diff("x.py", "gamma"))
    text = searchable_text(call)
    assert "x.py" in text and "gamma" in text and "old" in text
