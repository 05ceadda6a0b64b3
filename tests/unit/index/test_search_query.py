"""What a user types becomes a literal FTS5 query (every word quoted, each also a prefix), and
the snippet's match marks become highlight spans in UTF-16 units."""

from __future__ import annotations

import pytest
from sidemirror.index.search_matches import CLOSE, OPEN, shown, unmark
from sidemirror.index.search_query import MAX_WORDS, fts_query
from sidemirror.index.search_reads import BadQuery


@pytest.mark.parametrize(
    ("typed", "query"),
    [
        ("deploy", '"deploy" *'),
        ("tech-spec", '"tech-spec" *'),
        ("/usr/local/bin", '"/usr/local/bin" *'),
        ('say "hi"', '"say" * """hi""" *'),
        ("f(x) AND g(y)", '"f(x)" * "AND" * "g(y)" *'),
        ("NEAR(a b)", '"NEAR(a" * "b)" *'),
        ("q=*", '"q=*" *'),
        ("body:secret", '"body:secret" *'),
        ("a\x00b", '"a" * "b" *'),
    ],
)
def test_every_word_is_literal_and_a_prefix(typed: str, query: str) -> None:
    assert fts_query(typed) == query


@pytest.mark.parametrize("typed", ["", "   ", "*", "( ) * -", '""', "\x00"])
def test_input_no_word_can_match_finds_nothing(typed: str) -> None:
    assert fts_query(typed) is None


def test_fts_syntax_only_when_asked() -> None:
    assert fts_query("foo AND bar*", "fts") == "foo AND bar*"
    assert fts_query("  ", "fts") is None


def test_a_pasted_page_is_refused_not_run() -> None:
    with pytest.raises(BadQuery):
        fts_query(" ".join(["w"] * (MAX_WORDS + 1)))
    with pytest.raises(BadQuery):
        fts_query("x" * 5000)


def test_marks_become_spans() -> None:
    marked = f"the {OPEN}tech{CLOSE}-{OPEN}spec{CLOSE} doc"
    assert unmark(marked) == ("the tech-spec doc", [(4, 8), (9, 13)])
    assert unmark(f"odd {CLOSE} mark {OPEN}x") == ("odd  mark x", [])


def test_spans_are_utf16_offsets_and_cut_with_the_snippet() -> None:
    marked = f"🎉🎉 {OPEN}party{CLOSE} " + "x" * 600 + f" {OPEN}late{CLOSE}"
    text, matches = shown(marked, 500)
    assert len(text) == 500 and text.endswith("…")
    assert matches == [[5, 10]]  # two emoji before it: four UTF-16 units
    units = text.encode("utf-16-le")
    assert units[2 * 5 : 2 * 10].decode("utf-16-le") == "party"


def test_a_snippet_redaction_changed_gives_no_spans() -> None:
    secret = "ghp_" + "A1b2C3d4" * 5
    text, matches = shown(f"{OPEN}token{CLOSE} {secret}", 500)
    assert secret not in text and matches == []
