"""Discovery, pairing, badge and the popup's manual port, against a real server."""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect
from support import PORT_RANGE, TOKEN, Extension, free_port, port_free, wait_until


class NotSidemirror(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"app": "something-else", "status": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def impostor() -> Iterator[int | None]:
    """Another HTTP service on the default port, answering /health with a different app."""
    if not port_free(PORT_RANGE[0]):
        yield None  # already taken by something else: it is occupied either way
        return
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT_RANGE[0]), NotSidemirror)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield PORT_RANGE[0]
    srv.shutdown()
    srv.server_close()


def test_discovers_server_on_non_default_port_and_pairs(
    ext: Extension, impostor, server_factory
) -> None:
    server = server_factory(free_port(prefer=[47473, 47474, 47475]))
    assert server.port != PORT_RANGE[0]
    panel = ext.open_panel()  # opening the panel asks the worker for a fresh check
    status = wait_until(
        lambda: (s := ext.status(panel)) and s["state"] == "connected" and s, message="connected"
    )
    assert status["port"] == server.port
    assert status["instance"] == server.instance
    assert status["version"] and status["protocol"] == 1
    token = panel.evaluate("async () => (await chrome.storage.session.get('token')).token")
    assert token == {"value": TOKEN, "source": "paired", "instance": server.instance}
    assert ext.badge(panel) == "on"
    expect(panel.locator("#connection")).to_contain_text(
        f"Connected · v{status['version']} · :{server.port}"
    )
    # The token never reaches persistent storage.
    assert TOKEN not in json.dumps(panel.evaluate("() => chrome.storage.local.get()"))


def test_not_running_state_then_manual_port_from_popup(ext: Extension, server_factory) -> None:
    port = next(p for p in range(47490, 47500) if port_free(p))  # outside the probe range
    panel = ext.open_panel()
    popup = ext.open_popup()
    wait_until(
        lambda: (s := ext.status(popup)) and s["state"] != "connecting", message="first check"
    )
    if ext.status(popup)["state"] == "not_running":
        expect(popup.locator("#status-text")).to_have_text("Server not running")
        expect(
            panel.get_by_role("heading", name="The Sidemirror server isn't running")
        ).to_be_visible()
        expect(panel.locator(".serve-command")).to_have_text("sidemirror serve")
        expect(panel.get_by_role("button", name="Copy command")).to_be_visible()
        assert ext.badge(popup) == "off"

    port_input = popup.get_by_label("Server port")
    for bad in ("abc", "0", "70000", "12.5"):
        port_input.fill(bad)
        port_input.press("Enter")
        expect(popup.locator("#port-error")).to_contain_text("not a port")
        expect(port_input).to_have_attribute("aria-invalid", "true")
    assert (
        popup.evaluate("async () => (await chrome.storage.local.get('port')).port ?? null") is None
    )

    server = server_factory(port)
    port_input.fill(str(port))
    popup.get_by_role("button", name="Save").click()
    expect(popup.locator("#status-text")).to_have_text(re.compile(r"Connected · server v\d"))
    expect(popup.locator("#status-detail")).to_contain_text(f"127.0.0.1:{port}")
    expect(port_input).not_to_have_attribute("aria-invalid", "true")
    assert popup.evaluate("async () => (await chrome.storage.local.get('port')).port") == port
    assert ext.status(popup)["instance"] == server.instance
    assert ext.badge(popup) == "on"
    # The side panel follows the status change on its own.
    expect(panel.locator("#connection")).to_contain_text(f":{port}")


def test_popup_token_fallback_validates(ext: Extension, server) -> None:
    popup = ext.open_popup()
    ext.use_port(popup, server.port)
    popup.get_by_text("Pair with a token").click()
    field = popup.get_by_label("Token")
    field.fill("not a token")
    field.press("Enter")
    expect(popup.locator("#token-msg")).to_contain_text("doesn't look like a token")
    field.fill(TOKEN)
    field.press("Enter")
    expect(popup.locator("#token-msg")).to_have_text("Token accepted.")
    token = popup.evaluate("async () => (await chrome.storage.session.get('token')).token")
    assert token["value"] == TOKEN and token["source"] == "manual"
