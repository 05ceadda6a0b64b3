"""Accessibility (axe-core from npm, injected by the test only), keyboard use, and screenshots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.support import AXE_JS, SHOWN, open_tab, post_activity, rich_server
from tests.harness.browser import Extension, start_extension
from tests.harness.paths import ROOT
from tests.harness.server import Server

DOC_SHOTS = ROOT / "docs" / "screenshots"


def axe_violations(page: Page, ready: str) -> list[dict[str, Any]]:
    # Extension pages forbid inline scripts: inject axe as a pre-document script, then reload.
    page.add_init_script(path=str(AXE_JS))
    page.reload()
    page.wait_for_function("() => typeof axe !== 'undefined'")
    page.wait_for_selector(ready)
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => (d.open = true))")
    return page.evaluate("async () => (await axe.run(document)).violations")


def serious(violations: list[dict[str, Any]]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:5]}"
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_side_panel_and_popup_have_no_serious_axe_violations(
    ext: Extension, server: Server, scheme: str
) -> None:
    if not AXE_JS.exists():
        pytest.fail("run `npm install` in tests/e2e (axe-core)")
    panel = ext.open_panel()
    panel.emulate_media(color_scheme=scheme)
    ext.use_port(panel, server.port)
    expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
    assert serious(axe_violations(panel, ".feed [data-type=turn_complete]")) == []
    expect(panel.locator(".feed [data-type=turn_complete]").first).to_be_visible(timeout=15_000)

    popup = ext.open_popup()
    popup.emulate_media(color_scheme=scheme)
    expect(popup.locator("#status-text")).to_contain_text("Connected")
    assert serious(axe_violations(popup, "#status[data-state=connected]")) == []


def test_keyboard_navigation(ext: Extension, server: Server) -> None:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=15_000)
    # Tab order: tab, the session shown (it opens the list of every session), then the
    # timeline's items.
    panel.locator("#tab-session").focus()
    panel.keyboard.press("Tab")
    expect(panel.locator(SHOWN)).to_be_focused()
    panel.keyboard.press("Enter")
    dialog = panel.get_by_role("dialog", name="All sessions")
    expect(dialog.get_by_role("combobox", name="Filter sessions")).to_be_focused()
    panel.keyboard.press("Escape")
    expect(panel.locator(SHOWN)).to_be_focused()
    # The next item by its place in the session, not in the DOM: only rows near the view are in
    # it, and which moves (focusing the top row scrolls it into view, the first paint's window
    # widens when the page is idle), so "the second article" could name another row meanwhile.
    panel.locator(".feed > article").first.focus()
    at = int(panel.evaluate("() => document.activeElement.getAttribute('aria-posinset')"))
    panel.keyboard.press("ArrowDown")
    expect(panel.locator(f".feed > article[aria-posinset='{at + 1}']")).to_be_focused()
    panel.keyboard.press("End")
    assert panel.evaluate("() => document.activeElement.matches('.feed article')")
    # A thinking / notice disclosure opens from the keyboard.
    summary = panel.locator(".feed details > summary").first
    if summary.count():
        summary.focus()
        panel.keyboard.press("Enter")
        assert summary.evaluate("s => s.parentElement.open") in (True, False)


def browse_story(url: str, ws: str) -> list[dict[str, Any]]:
    """A realistic sequence of browser commands an agent reports, with starts and ends."""
    steps: list[tuple[str, list[str], str, int, str | None, str | None]] = [
        ("goto", [url], "ok", 412, None, None),
        ("snapshot", [], "ok", 38, '- heading "Sign in" [level=1]\n- textbox "Email" [ref=e3]\n'
         '- textbox "Password" [ref=e4]\n- button "Sign in" [ref=e5]', None),
        ("fill", ["e3", "ada@example.com"], "ok", 21, None, None),
        ("fill", ["e4", "correct horse battery staple"], "ok", 18, None, None),
        ("click", ["e5"], "ok", 0, None, None),
        ("wait_for_url", ["**/dashboard"], "error", 5004, None,
         "Timeout 5000ms exceeded while waiting for URL **/dashboard"),
        ("screenshot", ["login-error.png"], "ok", 96, "saved 1280×720 PNG", None),
        ("console_messages", [], "ok", 3, "[error] POST /api/session 500 (Internal Server Error)",
         None),
    ]  # fmt: skip
    entries: list[dict[str, Any]] = []
    for i, (command, args, status, ms, result, error) in enumerate(steps):
        base = {"request_id": f"s{i}", "command": command, "args": args, "url": url,
                "workspace": ws, "tab_id": 1}  # fmt: skip
        entries.append({**base, "type": "command_start"})
        end: dict[str, Any] = {**base, "type": "command_end", "status": status, "duration_ms": ms}
        if result:
            end["result"] = result
        if error:
            end["error"] = error
        if command == "snapshot":
            end["refs"] = [
                {"ref": "e3", "role": "textbox", "name": "Email", "selector": "#email"},
                {"ref": "e4", "role": "textbox", "name": "Password", "selector": "#password"},
                {"ref": "e5", "role": "button", "name": "Sign in", "selector": "button[type=submit]"},
            ]  # fmt: skip
        entries.append(end)
    entries.insert(2, {"type": "navigation", "command": "navigate", "url": url, "workspace": ws})
    entries.append({"type": "console", "command": "console.error",
                    "args": ["POST http://localhost:5173/api/session 500"], "url": url,
                    "workspace": ws})  # fmt: skip
    entries.append({"request_id": "s99", "type": "command_start", "command": "click",
                    "args": ["e5"], "url": url, "workspace": ws})  # fmt: skip
    return entries


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_activity_and_connect_tabs_have_no_serious_axe_violations(
    ext: Extension, server: Server, scheme: str
) -> None:
    post_activity(server, browse_story("http://localhost:5173/login", "/path/to/Demo"))
    panel = ext.open_panel()
    panel.emulate_media(color_scheme=scheme)
    ext.use_port(panel, server.port)
    open_tab(panel, "Activity")
    expect(panel.locator(".act-list > li")).to_have_count(11, timeout=10_000)
    assert serious(axe_violations(panel, ".act-list > li >> nth=10")) == []
    # With details open and a filter applied.
    panel.locator(".act-list .act-summary").nth(1).click()
    panel.get_by_label("Filter activity").fill("e5")
    assert serious(panel.evaluate("async () => (await axe.run(document)).violations")) == []

    open_tab(panel, "Connect")
    expect(panel.locator("#mcp-health")).to_have_attribute("data-state", "ok", timeout=10_000)
    assert serious(axe_violations(panel, ".mcp-tool >> nth=3")) == []
    # Keyboard: arrows move between the three tabs.
    panel.get_by_role("tab", name="Connect").focus()
    panel.keyboard.press("ArrowLeft")
    expect(panel.get_by_role("tab", name="Activity")).to_be_focused()
    expect(panel.get_by_role("tab", name="Activity")).to_have_attribute("aria-selected", "true")


def test_screenshots_light_and_dark(pw: Any, server_factory: Any, tmp_path: Path) -> None:
    # A long real session (Bash, Read, Edit, Write, Task with a sub-agent, plans, costs).
    # The README's pictures are refreshed only on request, so a test run leaves the tree clean:
    # SIDEMIRROR_UPDATE_SCREENSHOTS=1 scripts/test tests/e2e/test_a11y.py
    shots = DOC_SHOTS if os.environ.get("SIDEMIRROR_UPDATE_SCREENSHOTS") else tmp_path / "shots"
    server = rich_server(server_factory, tmp_path)
    post_activity(server, browse_story("http://localhost:5173/login", "/path/to/Demo"))
    shots.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        ext = start_extension(pw, tmp_path / f"profile-{scheme}", dark=scheme == "dark")
        try:
            panel = ext.open_panel()
            # Extension pages don't inherit the context's emulated scheme: set it on the page.
            panel.emulate_media(color_scheme=scheme)
            ext.use_port(panel, server.port)
            expect(panel.locator(".feed [data-type=turn_complete]").first).to_be_visible(
                timeout=15_000
            )
            bg = panel.evaluate("() => getComputedStyle(document.body).backgroundColor")
            assert (bg == "rgb(22, 24, 28)") == (scheme == "dark"), bg
            # A stretch of the sub-agent at work: Bash, Read and Edit cards with their results.
            target = panel.locator(".subagent-items > .tool.kind-edit:not(.failed)").first
            target.evaluate(
                """(el) => { const s = el.closest('.scroller');
                    s.scrollTop += el.getBoundingClientRect().top - s.getBoundingClientRect().top - 260; }"""
            )
            panel.wait_for_timeout(200)
            path = shots / f"sidepanel-{scheme}.png"
            panel.screenshot(path=str(path))
            assert path.stat().st_size > 10_000

            open_tab(panel, "Activity")
            rows = panel.locator(".act-list > li")
            expect(rows).to_have_count(11, timeout=10_000)
            rows.nth(2).locator(".act-summary").click()  # the snapshot, with its refs
            panel.mouse.move(0, 0)
            panel.wait_for_timeout(200)
            path = shots / f"activity-{scheme}.png"
            panel.screenshot(path=str(path))
            assert path.stat().st_size > 10_000

            open_tab(panel, "Connect")
            expect(panel.locator("#mcp-health")).to_have_attribute("data-state", "ok")
            panel.wait_for_timeout(200)
            path = shots / f"connect-{scheme}.png"
            panel.screenshot(path=str(path))

            if scheme == "light":  # the README's extension steps show the popup once
                popup = ext.open_popup()
                expect(popup.locator("#status-text")).to_have_text(f"Connected to :{server.port}")
                path = shots / "popup-light.png"
                popup.locator("main").screenshot(path=str(path))
                assert path.stat().st_size > 5_000
        finally:
            ext.ctx.close()
