"""Discovery, pairing, badge and the popup's manual port, against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.sync_api import expect
from sidemirror.app import create_app
from sidemirror.listen_socket import bind_socket
from sidemirror.runtime_file import write_runtime_file
from sidemirror.settings import Settings
from sidemirror.web.about import load_server_id
from sidemirror.web.peer import OwnerCache
from sidemirror.web.rules import extension_origins
from sidemirror.web.starting import StartingResponder

from tests.e2e.decoy import Decoy
from tests.harness.auth import TOKEN
from tests.harness.browser import BROWSER_MARK, Extension
from tests.harness.ports import parked_port, port_free
from tests.harness.waiting import wait_until


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
    assert token == {"value": TOKEN, "panel": server.panel_credential(), "source": "native",
                     "instance": server.instance, "server_id": server.server_id}  # fmt: skip
    paired = popup.evaluate("async () => (await chrome.storage.local.get('paired')).paired")
    assert paired == {"server_id": server.server_id, "port": server.port}
    assert ext.badge(popup) == "on"
    # Neither credential ever reaches persistent storage.
    kept = json.dumps(popup.evaluate("() => chrome.storage.local.get()"))
    assert TOKEN not in kept and server.panel_credential() not in kept

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
    wait_until(lambda: (s := ext.status(popup)) and s["state"] != "connecting", what="first check")
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
    popup.get_by_text("Read with a token").click()
    field = popup.get_by_label("Token")
    field.fill("not a token")
    field.press("Enter")
    expect(popup.locator("#token-msg")).to_contain_text("doesn't look like a token")
    field.fill(TOKEN)
    field.press("Enter")
    expect(popup.locator("#token-msg")).to_have_text("Token accepted.")
    token = popup.evaluate("async () => (await chrome.storage.session.get('token')).token")
    assert token["value"] == TOKEN and token["source"] == "manual"


@contextmanager
def starting_then_serving(port: int, root: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """The real start, in this process: the port bound and answered by the starting responder
    (as `sidemirror serve` does while it imports the server) until `serve()` builds the real app
    on a loop thread, stops the responder and takes the socket over, as cli/serving.py does."""
    settings = Settings(
        port=port,
        claude_dirs=[root / "claude"],
        codex_dir=root / "codex",
        data_dir=root / "data",
        runtime_dir=root / "runtime",  # where the browser's pairing host looks
    )
    server_id = load_server_id(settings.data_dir)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    runners: list[web.AppRunner] = []
    with bind_socket("127.0.0.1", port) as sock:
        starting = StartingResponder(
            sock,
            server_id=server_id,
            origins=extension_origins(()),
            owners=OwnerCache(enabled=True),
        )

        async def take_over() -> None:
            runner = web.AppRunner(create_app(settings, TOKEN))
            await runner.setup()
            runners.append(runner)
            starting.stop()
            await web.SockSite(runner, sock).start()
            # As cli/serving.py does once it serves: what clients (the pairing host) read.
            info = {"port": port, "pid": os.getpid(), "token": TOKEN}
            write_runtime_file(settings.runtime_dir, info, settings.data_dir)

        def serve() -> None:
            asyncio.run_coroutine_threadsafe(take_over(), loop).result(60)

        thread.start()
        try:
            with starting:
                yield server_id, serve
        finally:
            for runner in runners:
                asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(30)
            loop.close()


def test_a_starting_server_is_waited_for_then_paired(ext: Extension, tmp_path: Path) -> None:
    port = next(p for p in range(47490, 47500) if port_free(p))  # outside the probe range
    with starting_then_serving(port, tmp_path) as (server_id, serve):
        popup = ext.open_popup()
        popup.get_by_label("Server port").fill(str(port))
        popup.get_by_role("button", name="Connect").click()
        # /health says "starting", every other route 503: the worker waits, pairing nothing yet.
        expect(popup.locator("#status-text")).to_have_text("Server starting…")
        status = ext.status(popup)
        assert status is not None
        assert (status["state"], status["port"], status["server_id"]) == (
            "connecting",
            port,
            server_id,
        )
        serve()
        expect(popup.locator("#status-text")).to_have_text(f"Connected to :{port}")
        connected = ext.status(popup)
        assert connected is not None and connected["server_id"] == server_id
        assert ext.badge(popup) == "on"
