"""The page overlay: badges on a real local page for refs posted to the server, a flash on the
element the agent acted on, nothing once the server is gone, and no token in the page."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Request, expect
from support import TOKEN, Extension, Server, post_activity

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


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


REFS = [
    {"ref": "e1", "role": "button", "name": "Save order", "selector": "#save"},
    {"ref": "e2", "role": "link", "name": "Read the docs"},  # no selector: role + name
    {"ref": "e3", "role": "textbox", "name": "Email", "selector": "internal:role=textbox"},
    {"ref": "e4", "role": "button", "name": "Close dialog"},
    {"ref": "e9", "role": "button", "name": "Not on this page"},
]


def test_badges_for_posted_refs_flash_on_action_and_vanish_when_server_stops(
    ext: Extension, server: Server, site: str
) -> None:
    url = f"{site}/checkout?step=2"
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

    # Another page of the same site has no refs: no overlay at all.
    other = ext.ctx.new_page()
    other.goto(f"{site}/elsewhere")
    other.wait_for_timeout(1500)
    expect(other.locator("sidemirror-overlay")).to_have_count(0)
    other.close()

    # The server stops: the badges go away.
    server.stop()
    expect(overlay).to_have_count(0, timeout=10_000)
