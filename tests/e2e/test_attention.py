"""Attention end to end: a recorded Claude Code PermissionRequest replayed by `sidemirror hook`
(a real process) against a real server, answered from the side panel in real Chromium; the
toolbar badge, a notification and the Sessions view for waiting sessions."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.parse
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.support import SAMPLE_SESSION, open_tab
from tests.harness import hook_process
from tests.harness.browser import Extension
from tests.harness.paths import ROOT
from tests.harness.server import Server
from tests.harness.waiting import wait_until

EVENTS = ROOT / "tests" / "fixtures" / "hooks" / "permission-request.jsonl"
ALLOW = hook_process.decided("allow")


def permission_request() -> dict[str, Any]:
    event = json.loads(EVENTS.read_text().splitlines()[4])
    assert event["hook_event_name"] == "PermissionRequest"
    return {**event, "session_id": SAMPLE_SESSION}  # the e2e fixture's recorded session


def start_hook(
    server: Server, payload: dict[str, Any], agent: str = "claude"
) -> subprocess.Popen[str]:
    return hook_process.start_hook(server.runtime_dir, payload, "--agent", agent)


finish = hook_process.finish


def connected_panel(ext: Extension, server: Server) -> Page:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
    return panel


def test_allow_and_deny_from_the_session_tab(ext: Extension, server: Server) -> None:
    panel = connected_panel(ext, server)
    hook = start_hook(server, permission_request())
    card = panel.locator(".session-tab .decision-card")
    expect(card).to_be_visible(timeout=15_000)
    expect(card.locator(".decision-head")).to_have_text("Claude wants to use Bash")
    expect(card.locator("[data-path=command] .decision-field-text")).to_have_text("npm publish")
    card.get_by_role("button", name="Allow", exact=True).click()
    code, out = finish(hook)
    assert code == 0 and json.loads(out) == ALLOW
    expect(card.locator(".decision-status")).to_have_text("Allowed")
    record = panel.locator(".feed [data-type=system]", has_text="allowed from the side panel")
    expect(record).to_be_visible(timeout=10_000)

    hook = start_hook(server, permission_request())
    card = panel.locator(".session-tab .decision-card:not([data-answered])")
    expect(card).to_be_visible(timeout=15_000)
    card.locator(".decision-message").fill("Run the tests first")
    card.get_by_role("button", name="Deny").click()
    code, out = finish(hook)
    assert code == 0
    decision = json.loads(out)["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "deny", "message": "Run the tests first"}


def test_a_timeout_prints_nothing_and_the_card_says_so(ext: Extension, server_factory: Any) -> None:
    server: Server = server_factory(extra_args=("--decision-timeout", "3"))
    panel = connected_panel(ext, server)
    hook = start_hook(server, permission_request())
    card = panel.locator(".session-tab .decision-card")
    expect(card).to_be_visible(timeout=15_000)
    code, out = finish(hook)
    assert (code, out) == (0, "")
    expect(card.locator(".decision-status")).to_have_text(
        "Not allowed: no decision came in time, so it is asked in the terminal", timeout=10_000
    )
    expect(card).to_have_attribute("data-outcome", "timeout")  # the server's word, not a guess
    expect(card.get_by_role("button", name="Allow", exact=True)).to_be_disabled()


def test_badge_notification_and_sessions_view(ext: Extension, server: Server) -> None:
    server.ingest("/home/dev/other-repo", "other-1", [
        {"type": "user", "content": "Refactor the parser"},
    ])  # fmt: skip
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    wait_until(lambda: (ext.status(panel) or {}).get("state") == "connected", timeout=15)
    panel.evaluate("() => chrome.storage.local.set({ alerts: true })")
    worker = ext.worker()
    hook = start_hook(server, permission_request())
    try:
        wait_until(lambda: ext.badge(panel) == "1", timeout=15, what="badge counts 1 waiting")
        notes = wait_until(
            lambda: worker.evaluate("() => chrome.notifications.getAll()"),
            timeout=15,
            what="a notification for the waiting session",
        )
        (note_id,) = notes
        assert SAMPLE_SESSION in note_id

        open_tab(panel, "Sessions")
        rows = panel.locator(".session-row")
        demo = rows.filter(has_text="Demo")
        other = rows.filter(has_text="other-repo")
        expect(demo.locator(".chip")).to_have_text("waiting for permission", timeout=10_000)
        expect(other).to_be_visible()
        expect(rows.first).to_contain_text("Demo")  # waiting sessions first
        other.get_by_role("button").click()
        expect(panel.get_by_role("tab", name="Session", exact=True)).to_have_attribute(
            "aria-selected", "true"
        )
        expect(panel.locator(".feed")).to_contain_text("Refactor the parser", timeout=10_000)
    finally:
        hook.kill()
        hook.wait(10)


def test_an_acp_permission_request_is_shown_read_only(ext: Extension, server: Server) -> None:
    # claude-agent-acp's recorded edit-with-permission scenario, up to its request_permission:
    # what `sidemirror acp-tap` forwards while the editor shows its prompt.
    lines = (ROOT / "tests" / "fixtures" / "acp" / "edit-with-permission.jsonl").read_bytes()
    upto = b"".join(lines.splitlines(keepends=True)[:14])
    q = urllib.parse.urlencode({"workspace": "/tmp/e2e-acp-wait", "format": "acp"})
    server.request("POST", f"/api/ingest?{q}", upto, content_type="application/x-ndjson")
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    notice = panel.locator(".session-tab .decision-notice")
    expect(notice).to_be_visible(timeout=15_000)
    expect(notice).to_contain_text("answer it there")
    expect(panel.locator(".session-tab .decision-card button")).to_have_count(0)
    assert server.get("/api/decisions")["decisions"] == []
    rows = server.get("/api/attention")["sessions"]
    acp = [r for r in rows if r["workspace_name"] == "e2e-acp-wait"]
    assert [(r["state"], r["reason"]) for r in acp] == [("waiting", "permission")]


def test_the_popup_says_how_many_sessions_wait(ext: Extension, server: Server) -> None:
    panel = connected_panel(ext, server)
    popup = ext.open_popup()
    line = popup.locator("#waiting")
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{server.port}")
    expect(line).to_be_hidden()
    hook = start_hook(server, permission_request())
    try:
        expect(line).to_have_text("1 session waiting for you", timeout=15_000)
        expect(line).to_be_visible()
        # A popup opened now reads the count the worker keeps, not only changes to it.
        again = ext.open_popup()
        expect(again.locator("#waiting")).to_have_text("1 session waiting for you")
        again.close()
        panel.locator(".session-tab .decision-card").get_by_role(
            "button", name="Allow", exact=True
        ).click()
        code, _out = finish(hook)
        assert code == 0
        expect(line).to_be_hidden(timeout=15_000)  # answered: nobody waits any more
    finally:
        hook.kill()
        hook.wait(10)


def test_the_card_names_its_session_and_the_record_says_local_time(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    hook = start_hook(server, permission_request())
    try:
        open_tab(panel, "Sessions")  # lists every session's cards: the name says whose it is
        card = panel.locator(".sessions-view .decision-card")
        expect(card).to_be_visible(timeout=15_000)
        row = next(s for s in server.get("/api/attention")["sessions"]
                   if s["session"] == SAMPLE_SESSION)  # fmt: skip
        title = row["title"]
        assert title and row["workspace_name"] == "Demo"
        expect(card.locator(".decision-where")).to_have_text(f"Demo · {title}", timeout=10_000)
        card.get_by_role("button", name="Allow", exact=True).click()
        code, _out = finish(hook)
        assert code == 0
    finally:
        hook.kill()
        hook.wait(10)
    open_tab(panel, "Session")
    record = panel.locator(".feed [data-type=system]", has_text="allowed from the side panel")
    expect(record).to_be_visible(timeout=10_000)
    expect(record.locator(".who")).to_have_text("Decision")
    text = record.locator(".text").inner_text()
    assert not re.search(r"\d{4}-\d{2}-\d{2}T|\.\d{6}", text), text  # no raw ISO, no µs
    shown = record.locator("time.ts").inner_text()  # the header's local "HH:MM"
    assert re.search(rf"allowed from the side panel at {re.escape(shown)}:\d\d", text) or re.search(
        r"allowed from the side panel at \d{1,2}:\d{2}:\d{2}\s?[AP]M", text
    ), (text, shown)
