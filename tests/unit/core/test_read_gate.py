"""A client's read of a session's skipped part goes first: a background read (the search index
filling itself) waits at its next step while one runs, and goes on a grace time after it ends
(a client paging back asks again within moments)."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest
from sidemirror.core import history
from sidemirror.core.history import CLIENT_READ, ReadGate


def test_a_background_read_waits_while_a_client_read_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "CLIENT_GRACE_S", 0.2)
    gate = ReadGate()
    client_ctx = contextvars.copy_context()
    client_ctx.run(CLIENT_READ.set, True)
    assert client_ctx.run(gate.enter) is True  # a client read starts
    assert gate.enter() is False  # this thread's context is not a client's

    waited = threading.Event()

    def background_step() -> None:
        gate.wait_turn(None)
        waited.set()

    worker = threading.Thread(target=background_step)
    worker.start()
    assert not waited.wait(0.3)  # held back while the client read runs
    gate.leave(True)  # the client read ends
    ended = time.monotonic()
    assert waited.wait(10)
    assert time.monotonic() - ended >= 0.2  # and the grace time after it
    worker.join(10)


def test_a_stopping_source_releases_a_waiting_background_read() -> None:
    gate = ReadGate()
    ctx = contextvars.copy_context()
    ctx.run(CLIENT_READ.set, True)
    ctx.run(gate.enter)
    stopping = threading.Event()
    done = threading.Event()
    worker = threading.Thread(target=lambda: (gate.wait_turn(stopping), done.set()))
    worker.start()
    stopping.set()
    assert done.wait(10)
    worker.join(10)
