"""The attention board stays bounded: each entry's strings capped with a mark, at most
`MAX_TRACKED` entries, and entries forgotten when their session ends or stays idle."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sidemirror.attention import board as board_module
from sidemirror.attention.board import CWD_MAX_CHARS, MAX_TRACKED, SESSION_MAX_CHARS, Board
from sidemirror.attention.hook_events import StateSignal, parse_event
from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store

RUNNING = StateSignal("running")


def new_board() -> Board:
    return Board(Store(Hub(), Projector()))


def test_a_huge_cwd_and_session_id_are_cut_with_a_mark() -> None:
    board = new_board()
    raw = {"hook_event_name": "UserPromptSubmit", "session_id": "s" * 500_000,
           "cwd": "/" + "d" * 1_000_000}  # fmt: skip
    event = parse_event(raw)
    t = board.hook(event.cwd, event.session_id, RUNNING)
    row = board.live()[0]
    assert len(row["directory"]) == CWD_MAX_CHARS and row["directory"].endswith("…")
    assert len(row["session"]) == SESSION_MAX_CHARS and row["session"].endswith("…")
    assert t.directory == row["directory"]


def test_a_secret_across_the_cap_is_redacted_before_the_cut() -> None:
    board = new_board()
    secret = "ghp_" + "A1b2C3d4" * 5
    cwd = "/" + "d" * (CWD_MAX_CHARS - 20) + "/" + secret + "/x"
    board.hook(cwd, "s1", RUNNING)
    directory = board.live()[0]["directory"]
    assert secret[:12] not in directory and directory.endswith("…")


def test_the_count_is_capped_keeping_the_newest_and_the_waiting() -> None:
    board = new_board()
    board.hook("/w", "waiting-one", StateSignal("waiting", "permission"))
    for n in range(MAX_TRACKED + 200):
        board.hook("/w", f"s{n}", RUNNING)
    assert len(board.tracked) == MAX_TRACKED
    sessions = {row["session"] for row in board.live()}
    assert {"waiting-one", f"s{MAX_TRACKED + 199}"} <= sessions and "s0" not in sessions


def test_an_ended_session_is_forgotten() -> None:
    board = new_board()
    for n in range(50):
        board.hook("/w", f"s{n}", RUNNING)
    for n in range(50):
        board.hook("/w", f"s{n}", StateSignal("ended", "logout"))
    assert board.tracked == {} and board.live() == []


def test_an_idle_session_is_forgotten_after_the_idle_time(monkeypatch: pytest.MonkeyPatch) -> None:
    board = new_board()
    board.hook("/w", "idle", StateSignal("idle"))
    board.hook("/w", "busy", RUNNING)
    assert {row["session"] for row in board.live()} == {"idle", "busy"}
    later = board_module.time.time() + board_module.IDLE_FORGET_S + 1
    monkeypatch.setattr(board_module, "time", SimpleNamespace(time=lambda: later))
    assert [row["session"] for row in board.live()] == ["busy"]
    assert [session for _ws, session in board.tracked] == ["busy"]
