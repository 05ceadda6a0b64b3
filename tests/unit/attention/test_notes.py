"""The notes queue (attention/notes.py), a review's text (attention/review_note.py) and a
question's answers as the agent gets them (attention/questions.py)."""

from __future__ import annotations

import pytest
from sidemirror.attention.notes import QUEUED_PER_SESSION, Notes, NotQueued, QueueFull
from sidemirror.attention.questions import updated_input
from sidemirror.attention.review_note import BadReview, review_text

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_note_is_redacted_before_anything_reads_it() -> None:
    notes = Notes()
    note = notes.add("ws", "s1", f"use the token {SECRET} to push")
    assert SECRET not in note.text and "[REDACTED:" in note.text
    [delivered] = notes.take("ws", "s1", "PostToolUse")
    assert SECRET not in delivered.text
    assert SECRET not in str(notes.listing("ws", "s1"))


def test_each_note_changes_state_once_and_only_its_session_takes_it() -> None:
    notes = Notes()
    first = notes.add("ws", "s1", "one")
    other = notes.add("ws", "s2", "elsewhere")
    assert notes.take("ws", "s1", "Stop") == [first]
    assert notes.take("ws", "s1", "Stop") == []
    with pytest.raises(NotQueued):
        notes.cancel(first.id)
    assert notes.drop("ws", "s2", "ended") == [other]
    assert (other.state, other.why) == ("dropped", "ended")


def test_a_session_queue_is_bounded() -> None:
    notes = Notes()
    for n in range(QUEUED_PER_SESSION):
        notes.add("ws", "s1", f"note {n}")
    with pytest.raises(QueueFull):
        notes.add("ws", "s1", "one too many")
    notes.add("ws", "s2", "another session still has room")


def test_a_review_names_each_place_and_quotes_it() -> None:
    text = review_text([{"path": "a.py", "line": 3, "quote": ["x = 1"], "comment": "why 1?"}])
    assert text == "Review comments on your changes (1):\n\n1. a.py:3\n> x = 1\nwhy 1?"
    for bad in (None, [], [{"path": "a.py", "line": -1, "comment": "c"}], [{"line": 1}]):
        with pytest.raises(BadReview):
            review_text(bad)


def test_an_answer_in_the_users_words_is_redacted_but_labels_are_kept() -> None:
    asked = {
        "questions": [
            {
                "question": "Which?",
                "multiSelect": True,
                "options": [{"label": "A"}, {"label": "B"}],
            },
            {"question": "Token?", "options": []},
        ]
    }
    out = updated_input(asked, {"Which?": "A, B", "Token?": f"use {SECRET}"})
    assert out["answers"]["Which?"] == "A, B"
    assert SECRET not in out["answers"]["Token?"] and "[REDACTED:" in out["answers"]["Token?"]
    assert out["questions"] == asked["questions"]
