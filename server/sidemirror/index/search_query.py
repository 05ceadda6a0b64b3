"""What a user typed, as a safe FTS5 query: literal by default.

Every whitespace-separated word is matched literally, as a quoted FTS5 string (its quotes
doubled), and also as a prefix (`"tech-spec" *`: the phrase `tech spec`, its last token a
prefix). Punctuation, paths, quotes, parentheses, `*` and the words AND, OR, NOT and NEAR are
text like any other: nothing the user types is FTS5 syntax, so no input is a syntax error. The
words must all match (FTS5's implicit AND).

FTS5 syntax is used only when asked for (`syntax=fts`): then the text goes to FTS5 as it is,
and what it cannot parse is a 400 (index/search.py's BadQuery).
"""

from __future__ import annotations

import unicodedata
from typing import Literal

from sidemirror.index.search_reads import BadQuery

Syntax = Literal["literal", "fts"]
SYNTAXES: tuple[Syntax, ...] = ("literal", "fts")
MAX_WORDS = 64  # each word is a phrase FTS5 reads the doclists of; a pasted page is not a query
MAX_CHARS = 2000


def _has_token(word: str) -> bool:
    """Whether FTS5's unicode61 tokenizer finds a token in `word` (a letter, a digit or a
    private-use character). A word of punctuation alone would be an empty phrase, which
    matches nothing and would make every query it is part of match nothing."""
    return any(unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Co"
               for ch in word)  # fmt: skip


def _literal(word: str) -> str:
    return '"' + word.replace('"', '""') + '" *'


def fts_query(text: str, syntax: Syntax = "literal") -> str | None:
    """The MATCH expression for `text`; None when nothing in it can match (blank, or only
    punctuation). Raises BadQuery when it is too long to be a search."""
    if len(text) > MAX_CHARS:
        raise BadQuery(f"the query has {len(text)} characters; at most {MAX_CHARS} are searched")
    if syntax == "fts":
        return text.strip() or None
    # NUL ends a string inside SQLite's FTS5 parser ("unterminated string"); other control
    # characters are no token either.
    words = [w for w in text.replace("\x00", " ").split() if _has_token(w)]
    if len(words) > MAX_WORDS:
        raise BadQuery(f"the query has {len(words)} words; at most {MAX_WORDS} are searched")
    return " ".join(map(_literal, words)) or None
