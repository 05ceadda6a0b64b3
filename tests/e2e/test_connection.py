"""Discovery, pairing, badge and the popup's manual port, against a real server."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from decoy import Decoy
from playwright.sync_api import expect
from support import (
    BROWSER_MARK,
    TOKEN,
    Extension,
    parked_port,
    port_free,
    wait_until,
)


@pytest.mark.scans_range
def test_first_discovery_with_several_servers_asks_which_and_pairs_only_with_the_choice(
    ext: Extension, server_factory: Any, decoy: Decoy
) -> None:
    """A fresh extension, unpinned, finds the decoy and the test's own server on the range: it
    pairs with neither by itself; the user picks in the popup, and only that one gets paired."""
    server = server_factory(in_range=True)
    assert server.port != decoy.port
    started = time.monotonic()
    popup = ext.open_popup()
    # Unpinned, the way the popup's "automatic" does it: the whole range is probed.
    status = popup.evaluate(
        "async () => (await chrome.runtime.sendMessage({type: 'setPort', port: null})).data"
    )
    assert status["state"] == "other_server"
    offered = {o["port"] for o in status["offers"]}
    assert {server.port, decoy.port} <= offered
    assert ext.badge(popup) == "?"
    # The decoy was asked who it is, by this browser, and nothing else (checked after the test).
    assert [s.path for s in decoy.since(started, BROWSER_MARK)][:1] == ["/health"]

    expect(popup.locator("#status-text")).to_have_text("Not connected")
    offer = popup.locator(f".offer[data-port='{server.port}']")
    expect(offer.locator(".offer-text")).to_have_text(
        f"A Sidemirror server on :{server.port} — use it?"
    )
    offer.get_by_role("button", name="Use it").click()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{server.port}")
    paired_at = time.monotonic()
    status = ext.status(popup)
    assert status["port"] == server.port and status["instance"] == server.instance
    assert status["server_id"] == server.server_id
    token = popup.evaluate("async () => (await chrome.storage.session.get('token')).token")
    assert token == {"value": TOKEN, "source": "paired", "instance": server.instance,
                     "server_id": server.server_id}  # fmt: skip
    paired = popup.evaluate("async () => (await chrome.storage.local.get('paired')).paired")
    assert paired == {"server_id": server.server_id, "port": server.port}
    assert ext.badge(popup) == "on"
    # The token never reaches persistent storage.
    assert TOKEN not in json.dumps(popup.evaluate("() => chrome.storage.local.get()"))

    # Checks from now on ask the paired server only: the side panel opening, a check, the alarm.
    panel = ext.open_panel()
    expect(panel.locator("#connection")).to_contain_text(f":{server.port}")
    for _ in range(3):
        assert ext.check(panel)["state"] == "connected"
    assert decoy.since(paired_at, BROWSER_MARK) == []


def test_not_running_state_then_manual_port_from_popup(ext: Extension, server_factory) -> None:
    port = next(p for p in range(47490, 47500) if port_free(p))  # outside the probe range
    panel = ext.open_panel()
    popup = ext.open_popup()
    wait_until(
        lambda: (s := ext.status(popup)) and s["state"] != "connecting", message="first check"
    )
    # Pinned (by the test setup) to a port where nothing answers: only that port is probed.
    assert ext.status(popup)["state"] == "not_running"
    expect(popup.locator("#status-text")).to_have_text("Server not running")
    expect(panel.get_by_role("heading", name="The Sidemirror server isn't running")).to_be_visible()
    expect(panel.locator(".serve-command")).to_have_text(f"sidemirror serve --port {parked_port()}")
    expect(panel.get_by_text(f"Looking on 127.0.0.1:{parked_port()} only")).to_be_visible()
    expect(panel.get_by_role("button", name="Copy command")).to_be_visible()
    assert ext.badge(popup) == "off"

    port_input = popup.get_by_label("Server port")
    for bad in ("abc", "0", "70000", "12.5"):
        port_input.fill(bad)
        port_input.press("Enter")
        expect(popup.locator("#port-error")).to_contain_text("not a port")
        expect(port_input).to_have_attribute("aria-invalid", "true")
    assert popup.evaluate("async () => (await chrome.storage.local.get('port')).port") == (
        parked_port()
    )

    server = server_factory(port)
    port_input.fill(str(port))
    popup.get_by_role("button", name="Connect").click()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{port}")
    expect(popup.locator("#status-detail")).to_have_text(
        re.compile(rf"^Sidemirror server v\d\S* on 127\.0\.0\.1:{port} · protocol 1$")
    )
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
