"""The Sessions view's waiting row holds its own decision card (issue 33): the card of that
session's permission request sits inside the row, not in a list above every row; it is
answered there, and the row's ticking counter does not take the focus or the typed message
away from it. A real hook process, a real server, the real extension."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.e2e.support import SAMPLE_SESSION, open_tab
from tests.e2e.test_attention import connected_panel, finish, permission_request, start_hook
from tests.harness.browser import Extension
from tests.harness.server import Server


def test_the_waiting_row_holds_its_card_and_answers_from_it(ext: Extension, server: Server) -> None:
    panel = connected_panel(ext, server)
    server.ingest("/home/dev/other-repo", "other-1", [{"type": "user", "content": "Refactor"}])
    hook = start_hook(server, permission_request())
    try:
        open_tab(panel, "Sessions")
        view = panel.locator(".sessions-view")
        waiting = view.locator(f".session-row[data-session='{SAMPLE_SESSION}']")
        expect(waiting.locator(".chip")).to_have_text("waiting for permission", timeout=15_000)
        card = waiting.locator(".decision-card")
        expect(card).to_be_visible(timeout=15_000)
        expect(card.locator(".decision-head")).to_have_text("Claude wants to use Bash")
        # One card, in its row: none above the list, none in the other session's row.
        expect(view.locator(".decision-card")).to_have_count(1)
        expect(
            view.locator(".session-row", has_text="other-repo").locator(".decision-card")
        ).to_have_count(0)

        # Typing a message survives the row's "for N s" ticks (rows are updated in place).
        message = card.locator(".decision-message")
        message.fill("Run the tests first")
        since = waiting.locator(".session-since")
        ticked = since.text_content()
        expect(since).not_to_have_text(ticked or "", timeout=10_000)
        expect(message).to_be_focused()
        expect(message).to_have_value("Run the tests first")

        card.get_by_role("button", name="Deny").click()
        code, out = finish(hook)
        assert code == 0
        decision = json.loads(out)["hookSpecificOutput"]["decision"]
        assert decision == {"behavior": "deny", "message": "Run the tests first"}
        expect(card.locator(".decision-status")).to_have_text("Denied")
    finally:
        hook.kill()
        hook.wait(10)
