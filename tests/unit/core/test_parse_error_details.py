"""Parse errors are counted through one method, and the latest 20 say where: file, byte offset,
reason, with the path redacted like transcript text (`/health` shows it to any local process)."""

from __future__ import annotations

from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import PARSE_ERRORS_KEPT, ParseProblem, SessionUpdate, Store


def make_store() -> Store:
    return Store(Hub(), Projector())


def test_the_latest_details_are_kept_and_every_error_counted() -> None:
    store = make_store()
    store.count_parse_error(3)  # undescribed (a rejected ingest line)
    for n in range(PARSE_ERRORS_KEPT + 5):
        store.count_parse_error(problem=ParseProblem("/p/s.jsonl", n * 10, "line is not JSON"))
    assert store.parse_errors == 3 + PARSE_ERRORS_KEPT + 5
    details = list(store.parse_error_details)
    assert len(details) == PARSE_ERRORS_KEPT == 20
    assert [d["offset"] for d in details] == [n * 10 for n in range(5, 25)]
    assert set(details[0]) == {"file", "offset", "reason", "at"}
    assert details[0]["at"].endswith("Z")


def test_a_session_update_counts_its_problems_once_each() -> None:
    store = make_store()
    ws = store.ensure_workspace("/w", "claude")
    log = store.ensure_session(ws, "s", "claude", "e")
    problems = [ParseProblem("/w/a.jsonl", 0, "line is not JSON"), ParseProblem(None, None, "x")]
    store.write(log, SessionUpdate(errors=1, problems=problems))
    assert store.parse_errors == 3
    assert [(d["file"], d["offset"]) for d in store.parse_error_details] == [
        ("/w/a.jsonl", 0),
        (None, None),
    ]


def test_a_secret_in_a_path_never_leaves() -> None:
    store = make_store()
    key = "ghp_" + "a1B2" * 9
    store.count_parse_error(problem=ParseProblem(f"/home/me/{key}/s.jsonl", 5, f"bad {key}"))
    (detail,) = store.parse_error_details
    assert key not in str(detail)
    assert detail["file"] == "/home/me/[REDACTED:github_token]/s.jsonl"
