"""Answering from the panel, end to end in real Chromium: a Codex approval, "Allow all 3 waiting
in this session", an "Always allow" rule the agent suggested, and a notification that names the
command. Each request comes from the real hook command with the agent's documented payload on
stdin; the hook prints exactly the decision output the agent documents."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page, Worker, expect

from tests.e2e.support import SAMPLE_SESSION, open_tab
from tests.e2e.test_attention import ALLOW, connected_panel, finish, permission_request, start_hook
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.hook_process import decided
from tests.harness.paths import ROOT
from tests.harness.server import Server
from tests.harness.waiting import wait_until

CODEX_EVENTS = ROOT / "tests" / "fixtures" / "hooks" / "codex-permission-request.jsonl"
QUESTION_EVENT = ROOT / "tests" / "fixtures" / "hooks" / "ask-user-question.jsonl"

SHOTS = paths.SHOTS / "answers-inbox"


def codex_permission_request() -> dict[str, Any]:
    event = json.loads(CODEX_EVENTS.read_text().splitlines()[3])
    assert event["hook_event_name"] == "PermissionRequest"
    return dict(event)


def asking(command: str) -> dict[str, Any]:
    """A PermissionRequest for `command` (no suggested rule: the recorded one names another)."""
    asked = {k: v for k, v in permission_request().items() if k != "permission_suggestions"}
    return {**asked, "tool_input": {"command": command, "description": command}}


def test_a_codex_approval_is_answered_from_the_sessions_view(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    hook = start_hook(server, codex_permission_request(), agent="codex")
    open_tab(panel, "Sessions")
    card = panel.locator(".sessions-view .decision-card:not(.decision-batch)")
    expect(card.locator(".decision-head")).to_have_text("Codex wants to use Bash", timeout=15_000)
    expect(card.locator("[data-path=command] .decision-field-text")).to_have_text(
        "cargo test --workspace"
    )
    panel.screenshot(path=str(SHOTS / "codex-card.png"))
    card.get_by_role("button", name="Allow", exact=True).click()
    expect(card.locator(".decision-status")).to_have_text("Allowed")
    assert finish(hook) == (0, json.dumps(ALLOW) + "\n")  # Codex's documented output, exactly


def test_allow_all_three_lists_each_command_then_allows_each(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    commands = ["npm test", "npm run build", "npm publish"]
    hooks = [start_hook(server, asking(c)) for c in commands]
    try:
        open_tab(panel, "Sessions")
        batch = panel.locator(".sessions-view .decision-batch")
        expect(batch.locator(".decision-head")).to_have_text(
            "Allow all 3 waiting in this session", timeout=15_000
        )
        listed = batch.locator(".decision-batch-item")
        expect(listed).to_have_count(3)
        assert sorted(listed.all_inner_texts()) == sorted(f"Bash: {c}" for c in commands)
        panel.screenshot(path=str(SHOTS / "batch-card.png"))
        allow_all = batch.get_by_role("button", name="Allow all 3")
        expect(allow_all).to_be_enabled(timeout=10_000)  # once each card shows its whole input
        allow_all.click()
        for hook in hooks:
            code, out = finish(hook)
            assert code == 0 and json.loads(out) == ALLOW
        expect(batch.locator(".decision-status")).to_have_text("Allowed all 3")
    finally:
        for hook in hooks:
            hook.kill()


def test_always_allow_shows_the_agents_rule_and_sends_it_back(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    asked = permission_request()
    hook = start_hook(server, asked)
    card = panel.locator(".session-tab .decision-card")
    rule = card.locator(".decision-rule")
    expect(rule).to_have_text(
        "Always allow Bash(npm publish) in this project's local settings", timeout=15_000
    )
    panel.screenshot(path=str(SHOTS / "always-allow.png"))
    rule.click()
    code, out = finish(hook)
    assert code == 0
    assert json.loads(out) == decided("allow", updatedPermissions=asked["permission_suggestions"])
    expect(card.locator(".decision-status")).to_have_text(
        "Allowed. Claude remembers: Always allow Bash(npm publish) in this project's local settings"
    )


def alerting_panel(ext: Extension, server: Server) -> tuple[Page, Worker]:
    """A connected panel with notifications on, and the worker keeping what it asks Chrome to
    show (`globalThis.shownNotes`: Chrome itself keeps only the ids)."""
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    wait_until(lambda: (ext.status(panel) or {}).get("state") == "connected", timeout=15)
    panel.evaluate("() => chrome.storage.local.set({ alerts: true })")
    worker = ext.worker()
    worker.evaluate(
        """() => {
            globalThis.shownNotes = [];
            const create = chrome.notifications.create.bind(chrome.notifications);
            chrome.notifications.create = (id, options) => {
                globalThis.shownNotes.push({ id, ...options });
                return create(id, options);
            };
        }"""
    )
    return panel, worker


def shown_note(worker: Worker) -> dict[str, Any]:
    notes = wait_until(
        lambda: worker.evaluate("() => globalThis.shownNotes"),
        timeout=15,
        what="a notification for the waiting session",
    )
    (note,) = notes
    return dict(note)


def test_a_notification_carries_the_question(ext: Extension, server: Server) -> None:
    _, worker = alerting_panel(ext, server)
    asking = json.loads(QUESTION_EVENT.read_text().splitlines()[0])  # the PreToolUse
    hook = start_hook(server, {**asking, "session_id": SAMPLE_SESSION})
    assert finish(hook) == (0, "")
    note = shown_note(worker)
    assert note["message"] == "Claude asks: Which registry should the package go to? (and 1 more)"
    assert note["title"] == "Demo · /init"


def test_a_notification_names_the_command_and_the_session(ext: Extension, server: Server) -> None:
    panel, worker = alerting_panel(ext, server)
    hook = start_hook(server, permission_request())
    try:
        note = shown_note(worker)
        assert note["message"] == "Claude asks to run Bash: npm publish"
        assert note["title"] == "Demo · /init"  # the workspace and the session's name
        # Chrome creates it asynchronously: the call above is recorded before Chrome has it.
        wait_until(
            lambda: note["id"] in worker.evaluate("() => chrome.notifications.getAll()"),
            timeout=15,
            what="Chrome holding the notification",
        )
        [pending] = server.get("/api/decisions")["decisions"]
        assert note["id"].endswith(f":{SAMPLE_SESSION}:{pending['id']}")  # it names the card

        # What a click on it asks the panel for (the worker's onNotificationClicked writes it):
        # the panel opens the session, at that card.
        focus = {"workspace": pending["workspace"], "session": SAMPLE_SESSION}
        panel.evaluate(
            "(f) => chrome.storage.session.set({ attentionFocus: { ...f, at: Date.now() } })",
            {**focus, "request": pending["id"]},
        )
        card = panel.locator(f".session-tab .decision-card[data-id='{pending['id']}']")
        expect(card).to_have_attribute("data-focused", "1", timeout=15_000)
        expect(card).to_be_focused()
    finally:
        hook.kill()
        hook.wait(10)
