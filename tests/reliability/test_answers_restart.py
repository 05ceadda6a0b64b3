"""A restart of the real `sidemirror serve` while a question is held and a note waits fails
safe: the held `sidemirror hook` prints nothing (Claude Code asks in its terminal, nothing is
answered or approved), and the queued note is dropped, never delivered by the next server
(docs/api.md, "POST /api/notes": the queue is memory only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.store import workspace_id_for
from sidemirror.panel_credential import PANEL_HEADER

from tests.harness.hook_process import finish, start_hook
from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until

from .harness import CLAUDE_FIX, claude_project

SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
WS = workspace_id_for("/path/to/Demo")


def _event(fixture: str, name: str) -> dict[str, Any]:
    lines = (FIXTURES / "hooks" / fixture).read_text().splitlines()
    return next(e for e in map(json.loads, lines) if e["hook_event_name"] == name)


def _listed(server: Server) -> bool:
    try:
        rows = server.get(f"/workspace/{WS}/sessions")["sessions"]
    except OSError:
        return False
    return any(r["id"] == SESSION for r in rows)


def test_a_restart_answers_nothing_and_drops_the_queued_note(tmp_path: Path) -> None:
    server = Server(tmp_path)
    transcript = CLAUDE_FIX / "sample-project" / f"{SESSION}.jsonl"
    (claude_project(server) / transcript.name).write_bytes(transcript.read_bytes())
    with server:
        wait_until(lambda: _listed(server), 30, "the session listed")
        note = server.exchange(
            "POST",
            "/api/notes",
            json.dumps({"workspace": WS, "session": SESSION, "text": "Use pnpm."}).encode(),
            {
                "Authorization": f"Bearer {server.token}",
                PANEL_HEADER: server.panel_credential(),
                "Content-Type": "application/json",
            },
        )
        assert note.status == 201, note.body
        asked = start_hook(
            server.runtime_dir, _event("ask-user-question.jsonl", "PermissionRequest")
        )
        wait_until(lambda: server.get("/api/decisions")["decisions"], 30, "the question held")
    assert finish(asked) == (0, "")  # the terminal asks; nothing was answered

    server.start()
    try:
        wait_until(lambda: _listed(server), 30, "the session listed again")
        assert server.get(f"/api/notes?workspace={WS}&session={SESSION}")["notes"] == []
        after = start_hook(server.runtime_dir, _event("after-the-decision.jsonl", "PostToolUse"))
        assert finish(after) == (0, "")  # the note dropped with the old server
    finally:
        server.stop()
