"""The page overlay, opt-in per site: nothing on any page until the user turns it on for that
site in the Activity tab; then badges on a real local page for refs posted to the server, a flash
on the element the agent acted on, nothing once turned off or once the server is gone, and no
token in the page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Request, expect

from tests.e2e.support import QuietHandler, local_site, open_tab, post_activity
from tests.harness.auth import TOKEN
from tests.harness.browser import Extension
from tests.harness.chromium import EXT_DIR
from tests.harness.server import Server

PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<style>body{font:16px sans-serif;margin:40px} .badge{color:red} button{margin:8px}</style></head>
<body>
  <h1>Checkout</h1>
  <a href="/docs">Read the docs</a>
  <label>Email <input id="email" type="email"></label>
  <button id="save" onclick="window.clicks=(window.clicks||0)+1">Save order</button>
  <button aria-label="Close dialog">x</button>
</body></html>"""


class Handler(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_html(PAGE)


@pytest.fixture
def site() -> Iterator[str]:
    with local_site(Handler) as url:
        yield url


REFS = [
    {"ref": "e1", "role": "button", "name": "Save order", "selector": "#save"},
    {"ref": "e2", "role": "link", "name": "Read the docs"},  # no selector: role + name
    {"ref": "e3", "role": "textbox", "name": "Email", "selector": "internal:role=textbox"},
    {"ref": "e4", "role": "button", "name": "Close dialog"},
    {"ref": "e9", "role": "button", "name": "Not on this page"},
]


def registered(ext: Extension) -> list[dict[str, Any]]:
    scripts: list[dict[str, Any]] = ext.worker().evaluate(
        "() => chrome.scripting.getRegisteredContentScripts()"
    )
    return scripts


def overlay_reply(ext: Extension, url: str) -> dict[str, Any]:
    """What the overlay's content script hears from the worker for the tab showing `url`: asked
    from the content scripts' own world in that tab, the way the script asks."""
    reply: dict[str, Any] = ext.worker().evaluate(
        """async (url) => {
            const [tab] = await chrome.tabs.query({ url });
            const [{ result }] = await chrome.scripting.executeScript({
                target: { tabId: tab.id },
                func: () => chrome.runtime.sendMessage({ type: "pageOverlay" }),
            });
            return result;
        }""",
        url,
    )
    return reply


def overlay_switch(panel: Page, host: str) -> Locator:
    return panel.get_by_role("switch", name=f"Show element refs on {host}")


def test_install_asks_for_no_site_access() -> None:
    manifest = json.loads((EXT_DIR / "manifest.json").read_text())
    assert "content_scripts" not in manifest
    # `notifications` shows the user that a session waits for them (opt-in); `nativeMessaging`
    # pairs through the host only this extension may start. Neither reaches a site.
    assert sorted(manifest["permissions"]) == [
        "alarms",
        "nativeMessaging",
        "notifications",
        "scripting",
        "sidePanel",
        "storage",
    ]
    assert manifest["host_permissions"] == ["http://127.0.0.1/*", "http://localhost/*"]
    assert manifest["optional_host_permissions"] == ["http://*/*", "https://*/*"]


def test_badges_for_posted_refs_once_turned_on_for_the_site(
    ext: Extension, server: Server, site: str
) -> None:
    url = f"{site}/checkout?step=2"
    host = site.removeprefix("http://")
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    post_activity(server, [
        {"type": "command_end", "command": "snapshot", "url": url, "workspace": "/tmp/shop",
         "status": "ok", "refs": REFS},
        {"type": "command_end", "command": "click", "args": ["e1"], "url": url,
         "workspace": "/tmp/shop", "status": "ok", "duration_ms": 12},
    ])  # fmt: skip

    page = ext.ctx.new_page()
    to_server: list[str] = []
    page.on(
        "request",
        lambda r: (
            to_server.append(r.url)
            if isinstance(r, Request) and f":{server.port}/" in r.url
            else None
        ),
    )
    page.goto(url)
    # Off until the user turns it on: no script for any site, nothing asked about this page.
    assert registered(ext) == []
    assert overlay_reply(ext, url) == {"ok": True, "data": {"off": True, "connected": False,
                                                          "refs": [], "acted": None}}  # fmt: skip
    assert "GET /api/refs" not in server.requests()

    # The Activity tab offers the site the agent acted on; one click turns it on (a loopback
    # site: the install-time permission covers it, so Chrome asks nothing).
    open_tab(panel, "Activity")
    switch = overlay_switch(panel, host)
    expect(switch).not_to_be_checked()
    switch.click()
    expect(switch).to_be_checked()
    expect(panel.locator(".overlay-note")).to_have_text(f"Element refs show on {host}.")
    # The overlay, and the page-events script in the page's own world (test_page_events.py).
    assert sorted((s["world"], s["matches"]) for s in registered(ext)) == [
        ("ISOLATED", [f"{site}/*"]),
        ("MAIN", [f"{site}/*"]),
    ]

    # The tab already open gets the overlay without a reload.
    overlay = page.locator("sidemirror-overlay")
    badges = overlay.locator(".badge")
    expect(badges).to_have_count(4, timeout=10_000)
    assert sorted(badges.all_text_contents()) == ["e1", "e2", "e3", "e4"]
    # Each badge sits on its element (selector, role + name, or name fallback).
    for ref, target in (("e1", "#save"), ("e2", "a"), ("e3", "#email")):
        b = overlay.locator(f".badge[data-ref={ref}]").bounding_box()
        t = page.locator(target).bounding_box()
        assert b and t
        assert abs(b["x"] - t["x"]) < 8 and abs((b["y"] + b["height"] * 0.6) - t["y"]) < 8, ref
    # The element acted on last is marked.
    expect(overlay.locator(".badge.acted")).to_have_text("e1")

    # Inert: no pointer events, not in the page's text, and the page still gets its clicks.
    assert overlay.evaluate("(h) => getComputedStyle(h).pointerEvents") == "none"
    assert badges.first.evaluate("(b) => getComputedStyle(b).pointerEvents") == "none"
    assert overlay.get_attribute("aria-hidden") == "true"
    page.locator("#save").click()
    page.locator("#save").click()
    assert page.evaluate("() => window.clicks") == 2
    assert "e1" not in page.locator("body").inner_text()
    # A page style for `.badge` does not reach the shadow root.
    assert badges.first.evaluate("(b) => getComputedStyle(b).color") == "rgb(255, 255, 255)"

    # A new action on another ref flashes that element.
    post_activity(server, {"type": "command_end", "command": "click", "args": ["@e2"], "url": url,
                           "workspace": "/tmp/shop", "status": "ok"})  # fmt: skip
    expect(overlay.locator(".flash[data-ref=e2]")).to_be_attached(timeout=5_000)
    expect(overlay.locator(".badge.acted")).to_have_text("e2")

    # The page never talked to the server, and the token is nowhere in it.
    assert to_server == []
    assert TOKEN not in page.content()

    # Another page of the same site (loaded now: the registered script) has no refs: no overlay.
    other = ext.ctx.new_page()
    other.goto(f"{site}/elsewhere")
    assert overlay_reply(ext, f"{site}/elsewhere")["data"] == {"connected": True, "refs": [],
                                                               "acted": None}  # fmt: skip
    expect(other.locator("sidemirror-overlay")).to_have_count(0)
    other.close()

    # Turned off: gone from the open tab, and no script left for the site.
    switch.click()
    expect(switch).not_to_be_checked()
    expect(overlay).to_have_count(0, timeout=10_000)
    assert registered(ext) == []
    assert overlay_reply(ext, url)["data"]["off"] is True
    # On again: the same tab wakes its overlay.
    switch.click()
    expect(switch).to_be_checked()
    expect(badges).to_have_count(4, timeout=10_000)

    # The server stops: the badges go away.
    server.stop()
    expect(overlay).to_have_count(0, timeout=10_000)


def test_a_site_off_the_loopback_needs_chrome_to_grant_it(
    ext: Extension, server: Server, site: str
) -> None:
    """shop.test (mapped to 127.0.0.1 for the browser) is an ordinary website: the extension
    has no access to it until Chrome grants it. Turning the overlay on asks Chrome; Chrome's
    prompt is browser UI that Playwright cannot answer, so it stays open, and nothing runs."""
    port = site.rsplit(":", 1)[1]
    url = f"http://shop.test:{port}/checkout"
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    post_activity(server, {"type": "command_end", "command": "snapshot", "url": url,
                           "workspace": "/tmp/shop", "status": "ok", "refs": REFS})  # fmt: skip
    page = ext.ctx.new_page()
    page.goto(url)
    expect(page.locator("#save")).to_be_visible()
    origins = panel.evaluate("async () => (await chrome.permissions.getAll()).origins")
    assert origins == ["http://127.0.0.1/*", "http://localhost/*"]

    open_tab(panel, "Activity")
    switch = overlay_switch(panel, f"shop.test:{port}")
    switch.click()
    expect(panel.locator(".overlay-note")).to_have_text(
        f"Chrome is asking whether Sidemirror may show element refs on shop.test:{port}…"
    )
    expect(switch).to_be_disabled()
    expect(switch).not_to_be_checked()
    assert registered(ext) == []
    assert panel.evaluate(
        "(o) => chrome.permissions.contains({origins: [o]})", f"http://shop.test:{port}/*"
    ) is False  # fmt: skip
    expect(page.locator("sidemirror-overlay")).to_have_count(0)
    assert "GET /api/refs" not in server.requests()
