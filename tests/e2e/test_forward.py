"""A session from another machine, sent by `sidemirror forward`, in the real panel with its host
label, and marked disconnected once its forwarder is gone: the remote side is a separate HOME
whose forwarder process talks to the local server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_acp_session import port_outside_the_range

from tests.e2e.support import FIXTURES, Forwarder
from tests.harness.browser import Extension
from tests.harness.waiting import wait_until

LABEL = "devbox"


def test_a_forwarded_session_shows_with_its_host_label(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    local_claude = tmp_path / "local-claude"
    local_claude.mkdir()
    server = server_factory(port_outside_the_range(), local_claude)
    forwarder = Forwarder(server, tmp_path / "remote-home", LABEL, *(FIXTURES / "claude").iterdir())
    try:
        panel = ext.open_panel()
        ext.use_port(panel, server.port)
        expect(panel.locator(".feed [data-type=user]").first).to_be_visible(timeout=30_000)
        # The session list names the host's workspaces `LABEL:/dir`.
        panel.locator("#session-list-button").click()
        group = panel.locator(".sl-group", has_text=f"{LABEL}:")
        expect(group.first).to_be_visible(timeout=30_000)
        assert (group.first.get_attribute("title") or "").startswith(f"{LABEL}:/")
        expect(group.first).not_to_contain_text("disconnected")

        # The forwarder gone (its SSH session ended): the host's workspaces say so, with the
        # time since, where they would otherwise only look idle (the list is read again when
        # it opens).
        forwarder.stop()
        close = panel.get_by_role("button", name="Close")

        def says_gone() -> bool:
            close.click()
            panel.locator("#session-list-button").click()
            text = group.first.text_content(timeout=5_000) or ""
            return "disconnected just now" in text

        wait_until(says_gone, 30, what="the host's workspace marked disconnected")
    finally:
        forwarder.stop()
