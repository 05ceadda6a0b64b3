"""Which redaction rules run on a text: the automaton finds every trigger a plain substring
search finds, in any text, so no rule is skipped where it would have applied."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.core import redact
from sidemirror.core.redact import redact_text

TRIGGERS = sorted({t for rule in redact._RULES for t in rule.triggers})


def naive_rules(text: str) -> list[str]:
    """The rules a substring search per trigger selects (what the automaton replaces)."""
    lowered = text.lower()
    return [
        rule.name
        for rule in redact._RULES
        if any(t in (lowered if rule.fold else text) for t in rule.triggers)
    ]


# Text made of triggers, their pieces, upper-cased folds, and characters that encode to more
# than one byte (the automaton reads UTF-8): a lone surrogate, "İ", the Kelvin sign, emoji.
_PIECES = st.sampled_from(
    [
        *TRIGGERS,
        *(t.upper() for t in TRIGGERS),
        *(t[:2] for t in TRIGGERS),
        *(t[1:] for t in TRIGGERS),
    ]
    + ["\ud800", "\u0130", "\u212a", "é", "😀", " ", "\n", "COO\u212aIE", "Authorİzation"]
)
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_the_automaton_selects_the_rules_a_substring_search_selects(text: str) -> None:
    assert [rule.name for rule in redact._rules_for(text)] == naive_rules(text)


def test_the_list_of_non_ascii_characters_lowercased_to_ascii_is_whole() -> None:
    # Only these may make `str.lower()` find a folded trigger that `bytes.lower()` does not.
    found = [
        char
        for char in map(chr, range(0x80, sys.maxunicode + 1))
        if any(c.isascii() for c in char.lower())
    ]
    assert found == list(redact._ASCII_LOWERING)


def test_a_kelvin_sign_in_a_cookie_header_still_redacts_it() -> None:
    # "K" (U+212A) lowercases to "k": the header reads "cookie" to the rule's case-blind match.
    assert redact_text("Coo\u212aie: sessionid=abc123def456") == "Coo\u212aie: [REDACTED:cookie]"


def test_a_lone_surrogate_is_read_not_refused() -> None:
    text = "\ud800 Cookie: sessionid=abc123def456"
    assert redact_text(text) == "\ud800 Cookie: [REDACTED:cookie]"
