"""Truncation on grapheme-cluster boundaries: what the side panel shows of a long item."""

from __future__ import annotations

import time

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from sidemirror.core.truncate import ELLIPSIS, truncate

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 7 code points
FLAG_FR = "\U0001f1eb\U0001f1f7"
FLAG_DE = "\U0001f1e9\U0001f1ea"
E_ACUTE = "e\u0301"  # e + combining acute
THUMBS_TONE = "\U0001f44d\U0001f3fd"  # thumbs up + skin tone modifier


def test_short_text_is_unchanged() -> None:
    assert truncate("hello", 5) == ("hello", False, 5)
    assert truncate("", 1) == ("", False, 0)
    assert truncate(FAMILY, 7) == (FAMILY, False, 7)


def test_ascii() -> None:
    assert truncate("hello world", 6) == ("hello" + ELLIPSIS, True, 11)
    assert truncate("a" * 600, 500) == ("a" * 499 + ELLIPSIS, True, 600)


def test_exact_boundary() -> None:
    # One over the limit: the last character gives way to the ellipsis.
    assert truncate("abcdef", 5) == ("abcd" + ELLIPSIS, True, 6)
    assert truncate("abcde", 5) == ("abcde", False, 5)


def test_max_chars_one() -> None:
    assert truncate("ab", 1) == (ELLIPSIS, True, 2)
    assert truncate("a", 1) == ("a", False, 1)


@pytest.mark.parametrize("bad", [0, -1, -500])
def test_max_chars_below_one_is_an_error(bad: int) -> None:
    with pytest.raises(ValueError, match=str(bad)):
        truncate("text", bad)


def test_emoji_zwj_family_is_never_split() -> None:
    text = "ab" + FAMILY + "cd"
    for limit in range(3, 10):  # every cut that would land inside the family
        assert truncate(text, limit) == ("ab" + ELLIPSIS, True, 11)
    assert truncate(text, 10) == ("ab" + FAMILY + ELLIPSIS, True, 11)


def test_flags_are_never_split() -> None:
    text = FLAG_FR + FLAG_DE + FLAG_FR
    assert truncate(text, 4) == (FLAG_FR + ELLIPSIS, True, 6)
    assert truncate(text, 5) == (FLAG_FR + FLAG_DE + ELLIPSIS, True, 6)
    # A regional indicator run is paired from its start, wherever the cut falls.
    assert truncate("x" + text, 5) == ("x" + FLAG_FR + ELLIPSIS, True, 7)


def test_combining_accents_stay_with_their_letter() -> None:
    text = "caf" + E_ACUTE + "s"
    assert truncate(text, 5) == ("caf" + ELLIPSIS, True, 6)
    assert truncate(text, 6) == (text, False, 6)
    stacked = "a" + "\u0301\u0302\u0303\u0304" + "b" * 5
    assert truncate(stacked, 5) == (ELLIPSIS, True, 10)
    assert truncate(stacked, 7) == ("a\u0301\u0302\u0303\u0304" + "b" + ELLIPSIS, True, 10)


def test_skin_tone_modifier_stays() -> None:
    assert truncate("ok" + THUMBS_TONE + "!", 4) == ("ok" + ELLIPSIS, True, 5)


def test_hangul_jamo_and_cjk() -> None:
    jamo = "\u1100\u1161\u11a8"  # one syllable written as three jamo
    assert truncate(jamo * 3, 6) == (jamo + ELLIPSIS, True, 9)
    assert truncate("漢字かな交じり文", 4) == ("漢字か" + ELLIPSIS, True, 8)


def test_crlf_is_one_cluster() -> None:
    assert truncate("ab\r\ncd", 4) == ("ab" + ELLIPSIS, True, 6)


def test_surrogate_pair_is_never_split() -> None:
    # A pair that arrived as two code points (e.g. from a lone-surrogate decode).
    pair = "\ud83d\ude00"
    assert truncate("a" + pair + "bc", 3) == ("a" + ELLIPSIS, True, 5)


def test_first_cluster_too_long_gives_only_the_ellipsis() -> None:
    assert truncate(FAMILY + "x", 5) == (ELLIPSIS, True, 8)


def test_huge_text_is_cut_near_the_limit_only() -> None:
    text = ("word " * 1_000_000) + FAMILY
    start = time.perf_counter()
    shown, truncated, full = truncate(text, 500)
    assert (shown, truncated, full) == (text[:499] + ELLIPSIS, True, len(text))
    assert time.perf_counter() - start < 1.0  # generous: it must not segment 5 MB


def test_huge_single_cluster() -> None:
    text = "e" + "\u0301" * 200_000 + "tail"
    assert truncate(text, 500) == (ELLIPSIS, True, len(text))


def _clusters(text: str) -> list[str]:
    return list(regex.findall(r"\X", text))


_PIECES = st.sampled_from(
    ["a", "b", " ", "\n", "\r\n", E_ACUTE, "\u0301", FAMILY, FLAG_FR, "\U0001f1eb", "\u200d",
     THUMBS_TONE, "\u1100", "\u1161", "\u11a8", "\uac00", "漢", "\u0915\u094d\u0937", "\ufe0f",
     "\U0001f600", "\u0600"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(st.text(max_size=60), st.lists(_PIECES, max_size=30).map("".join)),
    max_chars=st.integers(min_value=1, max_value=70),
)
def test_property_whole_graphemes_within_limit(text: str, max_chars: int) -> None:
    shown, truncated, full = truncate(text, max_chars)
    assert full == len(text)
    assert len(shown) <= max_chars
    if not truncated:
        assert shown == text
        return
    assert len(text) > max_chars
    assert shown.endswith(ELLIPSIS)
    kept = shown[: -len(ELLIPSIS)]
    assert text.startswith(kept)
    # The kept part ends on a cluster boundary of the whole text, and is the longest
    # such prefix that fits.
    boundaries = {0}
    position = 0
    for cluster in _clusters(text):
        position += len(cluster)
        boundaries.add(position)
    assert len(kept) in boundaries
    assert len(kept) == max(b for b in boundaries if b <= max_chars - 1)
