"""States a user can trust, in real Chromium against a real `sidemirror serve`: a transcript that
stops mid-turn shows "running", then "idle" once the idle time passes, and stays idle after the
server restarts; a guessed state looks different from one a hook reported. And the demo never
competes: "Auto" leaves it the moment a real session appears."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, expect

from tests.e2e.support import SHOWN, choose_session, open_tab, transcript
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.server import Server
from tests.harness.waiting import wait_until

PROJECT = "/tmp/e2e-states-project"
IDLE_S = "3"
SHOTS = paths.SHOTS / "states"
REPORTED = "Reported by the agent (its hooks or protocol)"
INFERRED = ("Inferred from the session's file, its agent process and the time since it last "
            "wrote")  # fmt: skip


def write_session(claude_dir: Path, lines: list[str], project: str) -> Path:
    """The fixture's first `lines`, as a session of `project`, appended one by one (the way
    Claude Code writes) to a transcript the server already tails."""
    session = str(uuid.uuid4())
    folder = claude_dir / project.replace("/", "-")
    folder.mkdir(exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.touch()
    with path.open("a") as fh:
        for line in lines:
            record = json.loads(line)
            record.update(cwd=project, sessionId=session)
            fh.write(json.dumps(record) + "\n")
            fh.flush()
    return path


def connected(ext: Extension, server: Server) -> Page:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    wait_until(lambda: (ext.status(panel) or {}).get("state") == "connected", timeout=15)
    return panel


def expect_chip(chip: Locator, text: str, *, exact: bool) -> None:
    """The chip reads `text`; reported (`exact`) states are drawn solid, guessed ones outlined
    dashed with a tooltip that says so (the same in the Sessions view and the Session tab)."""
    expect(chip).to_have_text(text, timeout=15_000)
    expect(chip).to_have_attribute("data-exact", "true" if exact else "false")
    expect(chip).to_have_attribute("title", REPORTED if exact else INFERRED)
    outline = chip.evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline == ("none" if exact else "dashed")


def test_a_session_stopped_mid_turn_turns_idle_and_stays_idle_after_a_restart(
    ext: Extension, server_factory: Any, claude_dir: Path
) -> None:
    server: Server = server_factory(extra_args=("--idle-time", IDLE_S))
    panel = connected(ext, server)
    open_tab(panel, "Sessions")
    # A prompt, a reply and a tool call with no result: the agent stopped mid-turn.
    mid_turn = transcript(claude_dir).read_text().splitlines()[:4]
    write_session(claude_dir, mid_turn, PROJECT)
    row = panel.locator(".session-row", has_text="e2e-states-project")
    chip = row.locator(".chip")
    # Guessed from the file: said with a dashed outline and a tooltip that says so.
    expect_chip(chip, "running", exact=False)

    # No agent process and no write for the idle time: idle, still a guess.
    expect(chip).to_have_text("idle", timeout=15_000)
    expect(chip).to_have_attribute("data-exact", "false")

    server.stop()
    server.start()  # same port, data dir and transcripts
    # The panel comes back to the session that changed last: the mid-turn one, read again.
    open_tab(panel, "Session")
    expect(panel.locator(SHOWN)).to_contain_text("e2e-states-project", timeout=30_000)
    expect(panel.locator(SHOWN).locator(".auto-badge")).to_be_visible()
    # A hook names another session: its row proves the Sessions view shows the new server's
    # word, and it is exact (reported), drawn without the dashed outline.
    hook = {"hook_event_name": "UserPromptSubmit", "session_id": "after-the-restart",
            "cwd": "/tmp/e2e-states-hooked", "prompt": "go on"}  # fmt: skip
    server.request("POST", "/api/hooks/claude", json.dumps(hook).encode(),
                   content_type="application/json")  # fmt: skip
    open_tab(panel, "Sessions")
    hooked = panel.locator(".session-row", has_text="e2e-states-hooked").locator(".chip")
    expect_chip(hooked, "running", exact=True)
    # The mid-turn session, read by the restarted server: idle, not "running" since the start.
    expect(chip).to_have_text("idle")
    expect(chip).to_have_attribute("data-exact", "false")
    rows = server.get("/api/attention")["sessions"]
    mine = [r for r in rows if r["directory"] == PROJECT]
    assert [(r["state"], r["exact"]) for r in mine] == [("idle", False)]


def test_the_session_tabs_chip_tells_an_inferred_state_from_a_reported_one(
    ext: Extension, server_factory: Any, claude_dir: Path
) -> None:
    server: Server = server_factory()
    panel = connected(ext, server)
    project = "/tmp/e2e-states-chip"
    mid_turn = transcript(claude_dir).read_text().splitlines()[:4]
    session = json.loads(write_session(claude_dir, mid_turn, project).read_text().splitlines()[0])
    # Auto shows it once the server has read it; the user then picks it in the list.
    expect(panel.locator(SHOWN)).to_contain_text("e2e-states-chip", timeout=15_000)
    choose_session(panel, "e2e-states-chip")
    expect(panel.locator(SHOWN)).to_contain_text("e2e-states-chip")
    expect(panel.locator(SHOWN).locator(".auto-badge")).to_be_hidden()
    chip = panel.locator(".toolbar .session-state")
    # Guessed from the transcript (it stopped mid-turn): outlined dashed, as the Sessions view
    # draws it, with the same tooltip.
    expect_chip(chip, "running", exact=False)
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.locator(".toolbar").screenshot(path=str(SHOTS / "session-chip-inferred.png"))

    # Its Stop hook says the turn ended: exact, drawn solid.
    hook = {"hook_event_name": "Stop", "session_id": session["sessionId"], "cwd": project}
    server.request("POST", "/api/hooks/claude", json.dumps(hook).encode(),
                   content_type="application/json")  # fmt: skip
    expect_chip(chip, "idle", exact=True)
    panel.locator(".toolbar").screenshot(path=str(SHOTS / "session-chip-exact.png"))


def test_auto_leaves_the_demo_the_moment_a_real_session_appears(
    ext: Extension, server_factory: Any, claude_dir: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "no-sessions-yet"
    empty.mkdir()
    server: Server = server_factory(claude=empty, extra_args=("--demo",))
    panel = connected(ext, server)
    auto = panel.locator(SHOWN)
    expect(auto).to_contain_text("Demo", timeout=15_000)
    expect(panel.locator(".demo-banner")).to_be_visible()

    # The user's first real session: the demo keeps replaying, but Auto moves to the real one.
    lines = transcript(claude_dir).read_text().splitlines()[:6]
    write_session(empty, lines, "/tmp/e2e-first-real-project")
    expect(auto).to_contain_text("e2e-first-real-project", timeout=15_000)
    expect(auto.locator(".auto-badge")).to_be_visible()
    expect(panel.locator(".demo-banner")).to_be_hidden()
    reply = json.loads(lines[2])["message"]["content"][0]["text"]  # its first answer
    expect(panel.locator(".feed")).to_contain_text(reply[:60], timeout=10_000)
    # And stays there while the demo goes on writing every second.
    demo_ws = next(w for w in server.workspaces() if w["directory"] == "/demo/sidemirror-demo")
    before = demo_ws["last_activity"]
    wait_until(
        lambda: (
            next(w for w in server.workspaces() if w["id"] == demo_ws["id"])["last_activity"]
            != before
        ),
        timeout=15,
        what="the demo writes on",
    )
    expect(auto).to_contain_text("e2e-first-real-project")
    # One demo session, however long it replays.
    assert next(w for w in server.workspaces() if w["id"] == demo_ws["id"])["sessions"] == 1
