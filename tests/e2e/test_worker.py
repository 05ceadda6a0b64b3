"""Service worker lifecycle and the real side panel opened from the popup."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.support import rendered_ids
from tests.harness.browser import Extension, stop_worker, worker_running
from tests.harness.server import Server
from tests.harness.waiting import wait_until

WS = "/tmp/sidemirror-e2e-worker"


def test_panel_survives_worker_stop_and_badge_recovers(ext: Extension, server: Server) -> None:
    server.ingest(
        WS,
        "w1",
        [
            {"type": "user", "content": "first prompt"},
            {"type": "assistant", "content": "first answer"},
        ],
    )
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.get_by_text("first answer")).to_be_visible(timeout=10_000)

    stop_worker(ext, panel)
    # The panel streams straight from the server: it keeps working without the worker.
    server.ingest(WS, "w1", [{"type": "assistant", "content": "while the worker sleeps"}])
    expect(panel.get_by_text("while the worker sleeps")).to_be_visible(timeout=10_000)

    # Server goes away: the panel's reconnect wakes a fresh worker, which shows "off".
    server.stop()
    expect(panel.locator(".banner.reconnecting")).to_be_visible(timeout=10_000)
    wait_until(lambda: ext.badge(panel) == "off", timeout=20, what="badge off")
    server.start()
    expect(panel.locator(".banner.reconnecting")).to_be_hidden(timeout=20_000)
    wait_until(lambda: ext.badge(panel) == "on", timeout=10, what="badge recovers")
    assert worker_running(ext, panel)
    server.ingest(WS, "w1", [{"type": "assistant", "content": "after recovery"}])
    expect(panel.get_by_text("after recovery")).to_be_visible(timeout=10_000)
    ids = rendered_ids(panel)
    assert len(ids) == len(set(ids)) == 4


def test_popup_click_opens_the_real_side_panel(ext: Extension, server: Server) -> None:
    page = ext.open("popup/popup.html")
    ext.use_port(page, server.port)
    contexts = "async () => (await chrome.runtime.getContexts({contextTypes: ['SIDE_PANEL']})).map((c) => c.documentUrl)"
    assert page.evaluate(contexts) == []
    observer = ext.open("sidepanel/sidepanel.html")  # a tab, not a side panel context
    page.bring_to_front()
    page.get_by_role("button", name="Open side panel").click()
    # The context is listed as soon as it exists, its documentUrl empty until its page loads.
    urls = wait_until(
        lambda: [u for u in observer.evaluate(contexts) if u], what="a SIDE_PANEL context"
    )
    assert urls == [ext.url("sidepanel/sidepanel.html")]
