"""Searching a window of a JSONL file whole: the lines found are the complete lines holding a
key, in order, each once, as a search of each line would find them."""

from __future__ import annotations

import json
import re

from sidemirror.sources.files.window import Window, window_lines

BRANCH = re.compile(rb'"gitBranch"\s*:\s*"[^"]')


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_keys_find_each_complete_line_once_in_order() -> None:
    data = _lines(
        {"n": 1, "cwd": "/a", "timestamp": "t1"},  # both keys: one record
        {"n": 2, "other": True},
        {"n": 3, "timestamp": "t3"},
    )
    found = list(Window(data, cut_start=False).records_with(b'"cwd"', b'"timestamp"'))
    assert [r["n"] for r in found] == [1, 3]


def test_lines_cut_by_the_window_are_never_decoded() -> None:
    whole = _lines({"n": 1, "k": 1}, {"n": 2, "k": 2}, {"n": 3, "k": 3})
    # A tail window starting inside line 1 and a head window ending inside line 3.
    tail = whole[5:]
    head = whole[:-8]
    assert [r["n"] for r in Window(tail, cut_start=True).records_with(b'"k"')] == [2, 3]
    assert [r["n"] for r in Window(head, cut_start=False).records_with(b'"k"')] == [1, 2]
    for data, cut in ((tail, True), (head, False), (b'{"k": 1}', False), (b"", True)):
        lines = [json.loads(line) for line in window_lines(data, cut_start=cut) if line]
        assert list(Window(data, cut_start=cut).records_with(b'"k"')) == lines


def test_a_line_that_is_not_an_object_is_passed_over() -> None:
    data = b'["k"]\nnot json "k"\n' + _lines({"n": 1, "k": 1})
    assert [r["n"] for r in Window(data, cut_start=False).records_with(b'"k"')] == [1]


def test_last_matches_come_last_first_and_empty_values_are_skipped_undecoded() -> None:
    data = _lines(
        {"n": 1, "gitBranch": "main"},
        {"n": 2, "gitBranch": "feature"},
        {"n": 3, "gitBranch": ""},  # outside a repo: the key with an empty value
        {"n": 4, "text": 'a quoted "gitBranch" inside a string is escaped'},
    )
    window = Window(data, cut_start=False)
    found = list(window.last_records_matching(BRANCH))
    assert [r["n"] for r in found] == [2, 1]
