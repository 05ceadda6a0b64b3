"""One server identity: the extension follows the server it paired with, offers any other instead
of switching to it, and sends its token only to a server that proves it holds it.

Real `sidemirror serve` processes (a restart on the same data dir keeps its `server_id`; another
data dir is another server) and a stand-in impostor that copies a `server_id` but cannot compute
the `/api/identify` proof. The session's decoy on the range is checked after each test too.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.decoy import DECOY_TOKEN, Decoy
from tests.harness.auth import TOKEN
from tests.harness.browser import BROWSER_MARK, Extension
from tests.harness.waiting import wait_until


def token_in_storage(page: Page) -> Any:
    return page.evaluate("async () => (await chrome.storage.session.get('token')).token || null")


@pytest.mark.scans_range
def test_follows_its_server_to_a_new_port_and_offers_another_without_switching(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    first = server_factory(in_range=True)
    first.ingest("/tmp/e2e-identity", "s1", [{"type": "assistant", "content": "from the first"}])
    panel = ext.open_panel()
    ext.use_port(panel, first.port)
    expect(panel.get_by_text("from the first")).to_be_visible(timeout=10_000)
    # Back to automatic: the paired server is asked first, where it is.
    assert panel.evaluate(
        "async () => (await chrome.runtime.sendMessage({type: 'setPort', port: null})).data.port"
    ) == first.port  # fmt: skip
    server_id = first.server_id

    # The same server (same data dir) comes back on another port: followed, no question asked.
    first.stop()
    moved = server_factory(in_range=True, avoid=frozenset({first.port}))
    assert moved.server_id == server_id and moved.port != first.port
    status = wait_until(lambda: (s := ext.check(panel))["state"] == "connected" and s, timeout=20,
                        what="found on its new port")  # fmt: skip
    assert status["port"] == moved.port
    expect(panel.locator("#connection")).to_contain_text(f":{moved.port}")
    expect(panel.get_by_text("from the first")).to_be_visible(timeout=15_000)
    assert panel.evaluate("async () => (await chrome.storage.local.get('paired')).paired") == {
        "server_id": server_id, "port": moved.port}  # fmt: skip

    # It stops; another server (its own data dir) is on the range: offered, never switched to.
    moved.stop()
    (tmp_path / "other").mkdir()
    other = server_factory(in_range=True, avoid=frozenset({first.port, moved.port}),
                           home=tmp_path / "other")  # fmt: skip
    try:
        other.ingest(
            "/tmp/e2e-identity", "s1", [{"type": "assistant", "content": "from the other"}]
        )
        assert other.server_id != server_id
        status = ext.check(panel)
        assert status["state"] == "other_server"
        assert other.port in {o["port"] for o in status["offers"]}
        offers = panel.locator("#server-offer")
        expect(offers).to_be_visible()
        expect(offers).to_contain_text(
            f"The server this extension paired with (:{moved.port}) is not answering."
        )
        offer = offers.locator(f".offer[data-port='{other.port}']")
        expect(offer.locator(".offer-text")).to_have_text(
            f"Another Sidemirror server on :{other.port} — use it?"
        )
        expect(panel.locator("#connection")).to_have_text("Another server found")
        assert ext.badge(panel) == "?"
        popup = ext.open_popup()
        expect(
            popup.locator(f"#server-offer .offer[data-port='{other.port}'] .offer-text")
        ).to_have_text(f"Another Sidemirror server on :{other.port} — use it?")
        popup.close()
        # The other server was only asked who it is: no pairing, no identity check, no token.
        assert set(other.requests()) <= {"GET /health", "POST /api/ingest"}, other.requests()
        expect(panel.get_by_text("from the other")).to_have_count(0)

        # The user chooses it: now, and only now, the extension pairs with it.
        offer.get_by_role("button", name="Use it").click()
        expect(panel.locator("#connection")).to_contain_text(f":{other.port}", timeout=10_000)
        expect(offers).to_be_hidden()
        expect(panel.get_by_text("from the other")).to_be_visible(timeout=15_000)
        assert token_in_storage(panel)["server_id"] == other.server_id
    finally:
        other.stop()


def test_an_impostor_on_the_port_never_gets_the_token(ext: Extension, server_factory: Any) -> None:
    """The server goes away and something else takes its port, copying its `server_id` from
    `/health`: neither the worker nor the open panel sends it the token; the real server coming
    back is trusted again. (The port is taken once the extension has seen the server go, as a
    dropped stream or a refused probe: a request already on its way at the very instant of the
    swap is out of any client's reach, see docs/security.md.)"""
    server = server_factory()  # above the range; pinned: the extension probes this port only
    server.ingest("/tmp/e2e-impostor", "s1", [{"type": "assistant", "content": "real answer"}])
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.get_by_text("real answer")).to_be_visible(timeout=10_000)
    assert token_in_storage(panel)["value"] == TOKEN

    server.stop()
    expect(panel.locator(".banner.reconnecting")).to_be_visible(timeout=10_000)
    wait_until(lambda: ext.check(panel)["state"] == "not_running", what="the server is gone")
    impostor = Decoy(server.port, server_id=server.server_id).start()
    try:
        status = wait_until(lambda: (s := ext.check(panel))["state"] == "error" and s, timeout=20,
                            what="the impostor refused")  # fmt: skip
        # The pairing host answers from this user's runtime files: no server of ours is there.
        assert status["error"]["code"] == "not_our_server"
        assert ext.badge(panel) == "!"
        popup = ext.open_popup()
        expect(popup.locator("#status-detail")).to_contain_text(
            f"no Sidemirror server of this user runs on port {server.port}"
        )
        popup.close()
        # Let the open panel retry a few times against the impostor (its stream backs off).
        started = time.monotonic()
        wait_until(lambda: sum(s.path.startswith("/api/identify")
                               for s in impostor.since(started, BROWSER_MARK)) >= 4,
                   timeout=30, what="a few rounds of checks")  # fmt: skip
        seen = impostor.since(0, BROWSER_MARK)
        assert not [s for s in seen if s.carries(TOKEN)], "the impostor received the token"
        paths = {re.sub(r"\?.*", "", s.path) for s in seen}
        assert paths <= {"/health", "/api/identify"}, paths
        # What it handed out was never kept, and never sent back to it in a header either.
        assert token_in_storage(panel)["value"] == TOKEN
        assert not [s for s in seen if DECOY_TOKEN in s.headers.get("Authorization", "")]
    finally:
        impostor.stop()

    # The real server is back on its port: it proves it holds the token, and all is live again.
    server.start()
    wait_until(lambda: ext.check(panel)["state"] == "connected", timeout=20, what="back")
    server.ingest(
        "/tmp/e2e-impostor", "s1", [{"type": "assistant", "content": "after the impostor"}]
    )
    expect(panel.get_by_text("after the impostor")).to_be_visible(timeout=20_000)
