"""The Session tab follows the workspace whose agent acted in the browser last."""

from __future__ import annotations

import hashlib
import re

from playwright.sync_api import expect
from support import Extension, Server, post_activity

A, B = "/tmp/e2e-auto-alpha", "/tmp/e2e-auto-beta"


def ws_id(directory: str) -> str:
    return hashlib.sha256(directory.encode()).hexdigest()[:12]


def test_follows_the_workspace_acting_in_the_browser_unless_picked(
    ext: Extension, server: Server
) -> None:
    server.ingest(A, "sa", [{"type": "user", "content": "alpha prompt"},
                            {"type": "assistant", "content": "alpha answer"}])  # fmt: skip
    server.ingest(B, "sb", [{"type": "user", "content": "beta prompt"},
                            {"type": "assistant", "content": "beta answer"}])  # fmt: skip
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    # Nobody acted in the browser yet: the most recently active workspace (beta).
    expect(feed.get_by_text("beta answer")).to_be_visible(timeout=10_000)
    auto = panel.locator("#ws-select option[value='']")
    expect(auto).to_have_text(re.compile("^Most recent — "))

    # Alpha's agent acts in the browser: the panel switches to alpha by itself.
    post_activity(server, {"type": "command_end", "command": "goto", "args": ["http://x.test"],
                           "workspace": A, "status": "ok"})  # fmt: skip
    expect(feed.get_by_text("alpha answer")).to_be_visible(timeout=10_000)
    expect(feed.get_by_text("beta answer")).to_have_count(0)
    expect(auto).to_have_text("In the browser — e2e-auto-alpha")
    assert panel.locator("#ws-select").input_value() == ""

    # Beta's agent acts next (its id, not its directory): the panel follows.
    post_activity(server, {"type": "command_end", "command": "click", "args": ["e1"],
                           "workspace": ws_id(B), "status": "ok"})  # fmt: skip
    expect(feed.get_by_text("beta answer")).to_be_visible(timeout=10_000)

    # Once the user picks a workspace, browser activity elsewhere no longer moves the panel.
    panel.locator("#ws-select").select_option(ws_id(B))
    post_activity(server, {"type": "command_end", "command": "click", "args": ["e2"],
                           "workspace": A, "status": "ok"})  # fmt: skip
    panel.wait_for_timeout(3000)  # longer than the 2 s poll
    expect(feed.get_by_text("beta answer")).to_be_visible()
    expect(feed.get_by_text("alpha answer")).to_have_count(0)
