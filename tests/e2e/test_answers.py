"""Answering the agent from the panel in real Chromium, with real `sidemirror hook` processes
given Claude Code's documented payloads: a question answered on its card, a note delivered
after a tool call and one at the end of the turn, and a two-comment review from a diff, each
printed by the hook exactly as Claude Code's hooks reference documents."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page, expect
from test_attention import connected_panel, finish, start_hook
from test_review_panel import open_review_tools

from tests.e2e.support import SAMPLE_SESSION
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.hook_process import decided
from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until

PREFIX = "A note from the user, sent from the Sidemirror side panel while you worked:"
SHOTS = paths.SHOTS / "answers"


def hook_event(fixture: str, name: str) -> dict[str, Any]:
    lines = (FIXTURES / "hooks" / fixture).read_text().splitlines()
    found = [json.loads(line) for line in lines if f'"hook_event_name": "{name}"' in line]
    return {**found[0], "session_id": SAMPLE_SESSION}


def run_hook(server: Server, fixture: str, name: str) -> Any:
    code, out = finish(start_hook(server, hook_event(fixture, name)))
    assert code == 0
    return json.loads(out) if out.strip() else None


def shot(panel: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / name))


def test_a_question_is_answered_from_its_card(ext: Extension, server: Server) -> None:
    panel = connected_panel(ext, server)
    asked = hook_event("ask-user-question.jsonl", "PermissionRequest")
    hook = start_hook(server, asked)
    card = panel.locator(".session-tab .question-card")
    expect(card).to_be_visible(timeout=15_000)
    expect(card.locator(".decision-head")).to_have_text("Claude asks you")
    send = card.get_by_role("button", name="Send answers")
    expect(send).to_be_disabled()
    card.get_by_role("radio", name="npm").check()
    expect(send).to_be_disabled()  # the second question has no answer yet
    card.get_by_role("checkbox", name="Tests").check()
    card.get_by_role("checkbox", name="Build").check()
    shot(panel, "question-card.png")
    send.click()
    code, out = finish(hook)
    answers = {
        "Which registry should the package go to?": "npm",
        "Which checks should run before publishing?": "Tests, Build",
    }
    assert code == 0
    assert json.loads(out) == decided(
        "allow", updatedInput={**asked["tool_input"], "answers": answers}
    )
    expect(card.locator(".decision-status")).to_have_text("Answered")
    record = panel.locator(".feed [data-type=system]", has_text="answered from the side panel")
    expect(record).to_be_visible(timeout=10_000)


def send_note(panel: Page, text: str) -> None:
    composer = panel.get_by_role("region", name="Notes to the agent")
    composer.get_by_label("Note to the agent").fill(text)
    composer.get_by_role("button", name="Send note").click()
    row = composer.locator(".note-row", has_text=text)
    expect(row).to_have_attribute("data-state", "queued")


def test_notes_reach_the_agent_after_a_tool_call_and_at_turn_end(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    composer = panel.get_by_role("region", name="Notes to the agent")
    send_note(panel, "Use pnpm, not npm.")
    shot(panel, "note-queued.png")
    assert run_hook(server, "after-the-decision.jsonl", "PostToolUse") == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": f"{PREFIX}\n\nUse pnpm, not npm.",
        }
    }
    first = composer.locator(".note-row", has_text="Use pnpm")
    expect(first.locator(".note-state")).to_contain_text("Delivered after a tool call")

    send_note(panel, "Then bump the version.")
    assert run_hook(server, "after-the-decision.jsonl", "Stop") == {
        "decision": "block",
        "reason": f"{PREFIX}\n\nThen bump the version.",
    }
    second = composer.locator(".note-row", has_text="bump the version")
    expect(second.locator(".note-state")).to_contain_text("Delivered at the end of the turn")
    timeline = panel.locator(
        ".feed [data-type=system]", has_text="delivered at the end of the turn"
    )
    expect(timeline).to_be_attached(timeout=10_000)

    send_note(panel, "Never mind.")
    composer.locator(".note-row", has_text="Never mind").get_by_role(
        "button", name="Cancel"
    ).click()
    expect(composer.locator(".note-row", has_text="Never mind")).to_have_attribute(
        "data-state", "cancelled"
    )
    assert run_hook(server, "after-the-decision.jsonl", "PostToolUse") is None
    shot(panel, "notes-delivered.png")


def test_a_two_comment_review_from_a_diff_is_one_note(ext: Extension, server: Server) -> None:
    panel = connected_panel(ext, server)
    open_review_tools(panel)  # search and Changes fold with the review tools
    panel.get_by_role("button", name="Changes", exact=True).click()
    panel.get_by_role("list", name="Files changed").locator(".change-path").first.click()
    hunk = panel.locator(".feed details.diff .diff-hunk").first
    expect(hunk).to_be_in_viewport(timeout=20_000)
    path = hunk.locator("xpath=ancestor::details[1]").get_attribute("data-path")
    lines = hunk.locator(".diff-line[data-line]")
    quotes = [lines.nth(k).evaluate("el => el.lastChild.textContent") for k in range(4)]

    lines.nth(0).locator(".diff-no").click()
    lines.nth(2).locator(".diff-no").click(modifiers=["Shift"])
    form = panel.locator(".review-form")
    expect(form).to_contain_text(f"Comment on {path}:1-3")
    form.get_by_role("textbox").fill("Say what the project is first.")
    form.get_by_role("button", name="Add to review").click()
    lines.nth(3).locator(".diff-no").click()
    panel.locator(".review-form").get_by_role("textbox").fill("Drop this line.")
    panel.locator(".review-form").get_by_role("button", name="Add to review").click()
    composer = panel.get_by_role("region", name="Notes to the agent")
    expect(composer.locator(".review-count")).to_have_text("Review: 2 comments")
    shot(panel, "review-two-comments.png")
    composer.get_by_role("button", name="Send review").click()
    expect(composer.locator(".note-row[data-state=queued]")).to_have_count(1)

    out = run_hook(server, "after-the-decision.jsonl", "PostToolUse")
    review = (
        "Review comments on your changes (2):\n\n"
        f"1. {path}:1-3\n" + "".join(f"> +{q}\n" for q in quotes[:3]) + "Say what the project "
        "is first.\n\n"
        f"2. {path}:4\n> +{quotes[3]}\nDrop this line."
    )
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": f"{PREFIX}\n\n{review}",
        }
    }
    notes = wait_until(
        lambda: server.get(
            f"/api/notes?workspace={server.workspaces()[0]['id']}&session={SAMPLE_SESSION}"
        )["notes"],
        10,
        what="the review listed",
    )
    assert [(n["kind"], n["state"]) for n in notes] == [("review", "delivered")]


def test_a_question_that_cannot_be_answered_here_says_answer_in_the_terminal(
    ext: Extension, server: Server
) -> None:
    panel = connected_panel(ext, server)
    unreadable = {
        **hook_event("ask-user-question.jsonl", "PermissionRequest"),
        "tool_input": {"questions": "Which registry?"},
    }
    hook = start_hook(server, unreadable)
    card = panel.locator(".session-tab .question-card")
    expect(card).to_contain_text("answer in the terminal", timeout=15_000)
    expect(card.get_by_role("button")).to_have_count(0)
    hook.kill()
    finish(hook)
