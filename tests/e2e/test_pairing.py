"""Pairing in real Chromium (docs/security.md, pairing and scoped credentials): the extension
gets the token and the panel credential from the native messaging host that
`sidemirror extension install-host` installs (here in the profile's NativeMessagingHosts
folder, which Chromium reads for a custom user data dir), and nothing over HTTP without proof;
where the host is missing, the popup's code field pairs with the code `sidemirror pair`
prints. Either way the panel can then Allow a held permission request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, Playwright, expect
from test_attention import ALLOW, finish, permission_request, start_hook

from tests.harness.auth import TOKEN
from tests.harness.browser import Extension, start_extension
from tests.harness.paths import ROOT
from tests.harness.server import Server


def stored_token(page: Page) -> dict[str, Any]:
    token: dict[str, Any] = page.evaluate(
        "async () => (await chrome.storage.session.get('token')).token"
    )
    return token


def allow_from_the_panel(panel: Page, server: Server) -> None:
    """A held `sidemirror hook` permission request, allowed with a click; the hook prints it."""
    hook = start_hook(server, permission_request())
    card = panel.locator(".session-tab .decision-card")
    expect(card).to_be_visible(timeout=15_000)
    card.get_by_role("button", name="Allow", exact=True).click()
    code, out = finish(hook)
    assert code == 0 and json.loads(out) == ALLOW
    expect(card.locator(".decision-status")).to_have_text("Allowed")


def test_the_extension_pairs_through_the_native_host_and_allows(
    ext: Extension, server: Server
) -> None:
    panel = ext.open_panel()
    assert ext.use_port(panel, server.port)["state"] == "connected"
    token = stored_token(panel)
    assert token["source"] == "native"
    assert (token["value"], token["panel"]) == (TOKEN, server.panel_credential())
    expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
    allow_from_the_panel(panel, server)
    # Nothing was asked over HTTP to hand out a credential.
    assert "POST /api/pair" not in server.requests()


def pairing_code(server: Server) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sidemirror", "pair", "--runtime-dir", str(server.runtime_dir),
         "--data-dir", str(server.tmp / "data")],
        env={**os.environ, "PYTHONPATH": str(ROOT / "server")},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split("Pairing code: ", 1)[1].split()[0]


def test_without_the_host_the_popup_pairs_with_a_code_and_the_panel_allows(
    pw: Playwright, tmp_path: Path, server: Server
) -> None:
    ext = start_extension(pw, tmp_path / "profile-no-host", pairing_host=False)
    try:
        popup = ext.open_popup()
        popup.get_by_label("Server port").fill(str(server.port))
        popup.get_by_role("button", name="Connect").click()
        expect(popup.locator("#port-error")).to_contain_text(
            f"Found the server on :{server.port}; pair with a code"
        )
        expect(popup.locator("#status-detail")).to_contain_text("sidemirror extension install-host")
        assert stored_token(popup) is None  # nothing handed out without the host or a code
        section = popup.locator("#code-section")
        expect(section).to_have_attribute("open", "")
        field = popup.get_by_label("Pairing code")
        field.fill("nope")
        field.press("Enter")
        expect(popup.locator("#code-msg")).to_contain_text("A code is 6 letters and digits")
        field.fill("ABC-DEF")  # well formed, but not the one printed
        field.press("Enter")
        expect(popup.locator("#code-msg")).to_contain_text("wrong or expired")
        field.fill(pairing_code(server).lower())
        field.press("Enter")
        expect(popup.locator("#code-msg")).to_have_text("Paired.")
        expect(popup.locator("#status-text")).to_have_text(f"Connected to :{server.port}")
        token = stored_token(popup)
        assert token["source"] == "code"
        assert (token["value"], token["panel"]) == (TOKEN, server.panel_credential())

        panel = ext.open_panel()
        expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
        allow_from_the_panel(panel, server)
    finally:
        ext.ctx.close()


def test_a_pasted_token_reads_but_its_allow_is_refused(
    pw: Playwright, tmp_path: Path, server: Server
) -> None:
    """The runtime-file token, pasted into the popup of a browser without the pairing host:
    the panel shows the session, but Allow is refused and the agent still waits."""
    ext = start_extension(pw, tmp_path / "profile-token-only", pairing_host=False)
    try:
        popup = ext.open_popup()
        ext.use_port(popup, server.port)
        popup.get_by_text("Read with a token").click()
        field = popup.get_by_label("Token")
        field.fill(TOKEN)
        field.press("Enter")
        expect(popup.locator("#token-msg")).to_have_text("Token accepted.")
        token = stored_token(popup)
        assert token["source"] == "manual" and not token.get("panel")

        panel = ext.open_panel()
        expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
        hook = start_hook(server, permission_request())
        card = panel.locator(".session-tab .decision-card")
        expect(card).to_be_visible(timeout=15_000)
        card.get_by_role("button", name="Allow", exact=True).click()
        expect(card.locator(".decision-status")).to_contain_text(
            "only the paired extension may do this"
        )
        assert hook.poll() is None  # the agent still waits for a real answer
        assert server.get("/api/decisions")["decisions"]  # still pending
        hook.kill()
        hook.wait(10)
    finally:
        ext.ctx.close()
