"""Claude Code's `AskUserQuestion`, answered from the panel.

The question reaches the server as a held `PermissionRequest` (web/hooks.py) like any other
tool. Its answer goes back as the documented PermissionRequest decision: `allow` with an
`updatedInput` that is the tool's own input plus `answers`, an object from each question's text
to the answer: the chosen option's label, several labels joined with ", " (multiSelect), or the
user's own words. That is the shape the Agent SDK documents for answering AskUserQuestion
(`canUseTool` returning `updatedInput: {questions, answers}`), which a PermissionRequest hook's
`decision.updatedInput` carries the same way (docs/api.md, "Answering a question").

`updatedInput` is built from the input the hook sent, untouched (the agent matches answers to
its questions by their exact text), which this process keeps in memory only while the request
waits. The panel sees the redacted copy that `GET /api/decisions` lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from sidemirror.core.redact import redact_text

ASKING_TOOL = "AskUserQuestion"
ANSWER_CHARS = 4000  # one answer: a choice's label, or a paragraph the user typed
MULTI_SEPARATOR = ", "
HELD_MAX = 256  # questions held at once (each is a pending request, bounded there too)


class BadAnswer(ValueError):
    """The answers do not fit the questions; the message says how."""


@dataclass(frozen=True)
class Question:
    text: str
    multi: bool
    labels: tuple[str, ...]


def questions_of(tool_input: Any) -> list[Question]:
    """The questions of an AskUserQuestion input; [] when it is not one we can answer."""
    raw = tool_input.get("questions") if isinstance(tool_input, dict) else None
    if not isinstance(raw, list):
        return []
    found = []
    for q in raw:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            return []
        options = q.get("options")
        options = options if isinstance(options, list) else []
        labels = tuple(o["label"] for o in options if isinstance(o, dict) and "label" in o)
        if any(not isinstance(label, str) for label in labels):
            return []
        found.append(Question(q["question"], q.get("multiSelect") is True, labels))
    return found


def answerable(tool_input: Any, tool_name: str) -> TypeGuard[dict[str, Any]]:
    """Whether the panel can answer this request: an AskUserQuestion whose questions parse."""
    return tool_name == ASKING_TOOL and bool(questions_of(tool_input))


def updated_input(tool_input: dict[str, Any], answers: object) -> dict[str, Any]:
    """The tool's input with `answers` (question text → answer); BadAnswer unless every
    question has exactly one non-empty string answer and nothing else is answered."""
    questions = questions_of(tool_input)
    if not questions:
        raise BadAnswer("this request is not a question the panel can answer")
    if not isinstance(answers, dict):
        raise BadAnswer("answers must be an object from each question's text to its answer")
    texts = {q.text for q in questions}
    unknown = [key for key in answers if key not in texts]
    if unknown:
        raise BadAnswer("an answer names a question that was not asked")
    out: dict[str, str] = {}
    for q in questions:
        value = answers.get(q.text)
        if not isinstance(value, str) or not value.strip():
            raise BadAnswer(f"no answer to: {q.text[:200]}")
        if len(value) > ANSWER_CHARS:
            raise BadAnswer(f"an answer is longer than {ANSWER_CHARS} characters")
        out[q.text] = _outgoing(value.strip(), q)
    return {**tool_input, "answers": out}


def _outgoing(answer: str, question: Question) -> str:
    """The answer as the agent gets it: the agent's own labels as they are (they must match),
    the user's own words redacted like everything else that leaves the server."""
    if all(part in question.labels for part in answer.split(MULTI_SEPARATOR)):
        return answer
    return redact_text(answer)


def answers_text(answers: dict[str, str]) -> str:
    """The answers as the timeline shows them (redacted)."""
    return "\n".join(f"{redact_text(q)} → {redact_text(a)}" for q, a in answers.items())


class HeldQuestions:
    """The untouched input of each question held open, by request id (memory only). Entries of
    requests no longer pending are pruned each time one is added."""

    def __init__(self) -> None:
        self.inputs: dict[str, dict[str, Any]] = {}

    def hold(self, request_id: str, tool_input: dict[str, Any], pending: set[str]) -> None:
        for gone in [rid for rid in self.inputs if rid not in pending]:
            del self.inputs[gone]
        if len(self.inputs) < HELD_MAX:
            self.inputs[request_id] = tool_input

    def get(self, request_id: str) -> dict[str, Any] | None:
        return self.inputs.get(request_id)

    def forget(self, request_id: str) -> None:
        self.inputs.pop(request_id, None)
