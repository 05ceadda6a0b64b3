"""Accessibility (axe-core from npm, injected by the test only), keyboard use, and screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from support import AXE_JS, ROOT, Extension, Server, launch

SHOTS = ROOT / "docs" / "screenshots"


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
    # Tab order: tab, workspace picker, session picker, then the timeline's items.
    panel.locator("#tab-session").focus()
    panel.keyboard.press("Tab")
    expect(panel.locator("#ws-select")).to_be_focused()
    panel.keyboard.press("Tab")
    expect(panel.locator("#session-select")).to_be_focused()
    first = panel.locator(".feed > article").first
    first.focus()
    panel.keyboard.press("ArrowDown")
    expect(panel.locator(".feed article").nth(1)).to_be_focused()
    panel.keyboard.press("End")
    assert panel.evaluate("() => document.activeElement.matches('.feed article')")
    # A thinking / notice disclosure opens from the keyboard.
    summary = panel.locator(".feed details > summary").first
    if summary.count():
        summary.focus()
        panel.keyboard.press("Enter")
        assert summary.evaluate("s => s.parentElement.open") in (True, False)


def test_screenshots_light_and_dark(pw: Any, server: Server, tmp_path: Path) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        ctx = launch(pw, tmp_path / f"profile-{scheme}", dark=scheme == "dark")
        try:
            ext = Extension(ctx)
            ext.worker()
            panel = ext.open_panel()
            ext.use_port(panel, server.port)
            expect(panel.locator(".feed [data-type=turn_complete]").first).to_be_visible(
                timeout=15_000
            )
            # The end of the session: a failed tool call, the plan, the reply and the turn's cost.
            panel.locator(".scroller").evaluate("(s) => { s.scrollTop = s.scrollHeight; }")
            panel.wait_for_timeout(200)
            path = SHOTS / f"sidepanel-{scheme}.png"
            panel.screenshot(path=str(path))
            assert path.stat().st_size > 10_000
        finally:
            ctx.close()
