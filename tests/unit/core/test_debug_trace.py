"""The debug trace as a store tap: one line per message the store publishes, in order."""

from __future__ import annotations

import json
import time
from pathlib import Path

from sidemirror.core.debug_trace import DebugTrace
from sidemirror.core.hub import Hub
from sidemirror.core.models import AssistantDeltaEvent, UserEvent
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionUpdate, Store


def test_items_partials_status_and_resets_each_name_their_session(tmp_path: Path) -> None:
    store = Store(Hub(), Projector(max_chars=5))
    trace = DebugTrace(tmp_path / "t.jsonl", store)
    trace.start(replay=False)
    trace.attach()
    ws = store.ensure_workspace("/w", "acp")
    log = store.ensure_session(ws, "s1", "acp", "e1")
    update = SessionUpdate(
        items=[UserEvent(ts="2026-01-01T00:00:00Z", content="hello there")],
        live=[AssistantDeltaEvent(ts="2026-01-01T00:00:01Z", segment_id="m:0", text="Hi")],
        touched_at=time.time(),  # running: written just now (core/states.py)
        state="running",
        state_exact=True,
    )
    store.write(log, update)
    store.reset(log, "e2")
    trace.close()
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [line["event"] for line in lines] == [
        "server_start",
        "user",
        "assistant_delta",
        "session_status",  # the workspace now follows this session
        "session_status",  # running
        "reset",
    ]
    assert all((line["workspace"], line["session"]) == (ws.id, "s1") for line in lines[1:])
    user = lines[1]
    assert (user["id"], user["content"], user["truncated"]) == ("e1.1", "hell…", True)
    assert (lines[4]["state"], lines[4]["exact"]) == ("running", True)  # the protocol said it
    assert (lines[5]["reason"], lines[5]["epoch"]) == ("log_reset", "e2")
