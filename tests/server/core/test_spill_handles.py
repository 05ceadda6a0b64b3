"""Bounded open spill files: a fleet of sessions each past the in-memory window (2,048 items)
keeps at most `SPILL_FILES.capacity` spill files open, and every session's items, spilled ones
included, still read back exactly (a closed file is reopened on demand)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.item_log import DEFAULT_WINDOW, SPILL_FILES
from sidemirror.core.models import AssistantEvent
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionUpdate, Store

SESSIONS = 20
OPEN_MAX = 6  # fewer than the sessions, so the LRU must close and reopen
PER_SESSION = DEFAULT_WINDOW + 300
BATCH = 150


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _text(session: int, n: int) -> str:
    return f"session {session} item {n} \u00e9"


def test_spill_files_open_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SPILL_FILES, "capacity", OPEN_MAX)
    store = Store(Hub(), Projector(), tmp_path / "spill")
    ws = store.ensure_workspace("/work/fleet", "claude")
    logs = [store.ensure_session(ws, f"s{i}", "claude", "e1") for i in range(SESSIONS)]
    before = _open_fds()
    most = before
    # Round robin, a batch at a time, as a fleet's appends arrive: every log spills in turn.
    for start in range(0, PER_SESSION, BATCH):
        for s, log in enumerate(logs):
            count = min(BATCH, PER_SESSION - start)
            items = [AssistantEvent(content=_text(s, start + k)) for k in range(count)]
            store.write(log, SessionUpdate(items=items))
            most = max(most, _open_fds())
    assert all(len(log.items) == PER_SESSION for log in logs)
    assert len(os.listdir(tmp_path / "spill")) == SESSIONS  # every one spilled
    # Read every item back, spilled ones first, sessions interleaved: reopened on demand.
    for n in range(PER_SESSION):
        for s, log in enumerate(logs):
            item = log.items[n]
            assert isinstance(item, AssistantEvent) and item.content == _text(s, n)
            assert item.id == f"e1.{n + 1}"
        if n % 500 == 0:
            most = max(most, _open_fds())
    assert most - before <= OPEN_MAX
    for log in logs:
        log.close()
    assert _open_fds() <= before
