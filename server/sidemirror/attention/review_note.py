"""Review comments on a diff, gathered into the one note that carries them to the agent.

Each comment names a file and a line range of the diff the user selected, quotes those lines
as the panel showed them, and says what the user wants. The note lists them in order with
`path:line` (or `path:first-last`) so the agent can find each place and act on it.
"""

from __future__ import annotations

from dataclasses import dataclass

COMMENTS_MAX = 50
QUOTE_LINES_MAX = 40
COMMENT_CHARS = 4000


class BadReview(ValueError):
    pass


@dataclass(frozen=True)
class Comment:
    path: str
    line: int
    end_line: int
    quote: list[str]
    comment: str

    @property
    def where(self) -> str:
        lines = str(self.line) if self.end_line == self.line else f"{self.line}-{self.end_line}"
        return f"{self.path}:{lines}"


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadReview(f"{what} must be a line number")
    return value


def parse_comment(raw: object) -> Comment:
    if not isinstance(raw, dict):
        raise BadReview("each comment is an object")
    path, comment = raw.get("path"), raw.get("comment")
    if not isinstance(path, str) or not path or len(path) > 4096:
        raise BadReview("each comment needs the file's path")
    if not isinstance(comment, str) or not comment.strip():
        raise BadReview("each comment needs its text")
    line = _int(raw.get("line"), "line")
    end_line = _int(raw.get("end_line", line), "end_line")
    quote = raw.get("quote", [])
    if not isinstance(quote, list) or any(not isinstance(q, str) for q in quote):
        raise BadReview("quote must be the list of the selected lines")
    return Comment(
        path,
        line,
        max(line, end_line),
        [q[:1000] for q in quote[:QUOTE_LINES_MAX]],
        comment.strip()[:COMMENT_CHARS],
    )


def review_text(raw_comments: object) -> str:
    """The review as one note; BadReview when the comments are not usable."""
    if not isinstance(raw_comments, list) or not raw_comments:
        raise BadReview("a review needs at least one comment")
    if len(raw_comments) > COMMENTS_MAX:
        raise BadReview(f"a review holds at most {COMMENTS_MAX} comments")
    comments = [parse_comment(raw) for raw in raw_comments]
    parts = [f"Review comments on your changes ({len(comments)}):"]
    for n, c in enumerate(comments, 1):
        quoted = [f"> {line}" for line in c.quote]
        parts.append("\n".join([f"{n}. {c.where}", *quoted, c.comment]))
    return "\n\n".join(parts)
