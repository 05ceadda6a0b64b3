"""The popup's port: one truth about the server the extension is connected to. Picking a port
connects there in one click, or says it can't and stays where it was; nothing stale survives the
popup closing or the service worker stopping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sidemirror.listen_socket import PORT_RANGE

from tests.e2e.decoy import DECOY_TOKEN, Decoy
from tests.harness.auth import TOKEN
from tests.harness.browser import Extension, stop_worker
from tests.harness.ports import parked_port, quiet_port


def stored(page: Page, key: str) -> Any:
    return page.evaluate("async (k) => (await chrome.storage.local.get(k))[k] ?? null", key)


def test_a_port_connects_there_or_nothing_changes(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    first = server_factory()
    panel = ext.open_panel()
    ext.use_port(panel, first.port)
    popup = ext.open_popup()
    field = popup.get_by_label("Server port")
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{first.port}")
    expect(field).to_have_value(str(first.port))
    expect(popup.locator("#port-help")).to_have_text(
        f"Using port {first.port} only. Empty the field and press Connect to find the server "
        "by itself."
    )

    # A port where nothing answers: said so, and the extension stays with its server.
    dead = parked_port()
    field.fill(str(dead))
    popup.get_by_role("button", name="Connect").click()
    expect(popup.locator("#port-error")).to_have_text(
        f"No Sidemirror server answers on 127.0.0.1:{dead}. Still connected to :{first.port}."
    )
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{first.port}")
    assert stored(popup, "port") == first.port
    assert stored(popup, "paired") == {"server_id": first.server_id, "port": first.port}
    status = ext.status(popup)
    assert status["state"] == "connected" and status["port"] == first.port

    # Another server (its own data dir) on another port: one click connects and pairs.
    (tmp_path / "second").mkdir()
    second = server_factory(home=tmp_path / "second", avoid=frozenset({first.port}))
    assert second.server_id != first.server_id
    second.ingest("/tmp/e2e-popup-port", "s", [{"type": "assistant", "content": "from second"}])
    field.fill(str(second.port))
    popup.get_by_role("button", name="Connect").click()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{second.port}")
    expect(popup.locator("#port-error")).to_have_text("")
    expect(field).not_to_have_attribute("aria-invalid", "true")
    assert stored(popup, "paired") == {"server_id": second.server_id, "port": second.port}
    expect(panel.locator("#connection")).to_contain_text(f":{second.port}")
    expect(panel.get_by_text("from second")).to_be_visible()

    # Reopened after the worker stopped (as Chrome stops it when idle): the same one truth.
    popup.close()
    stop_worker(ext, panel)
    popup = ext.open_popup()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{second.port}")
    expect(popup.get_by_label("Server port")).to_have_value(str(second.port))
    expect(popup.locator("#port-error")).to_have_text("")
    for text in (str(dead), f":{first.port}"):
        expect(popup.locator("main")).not_to_contain_text(text)


def test_a_port_whose_server_cannot_prove_itself_is_refused_and_the_old_one_kept(
    ext: Extension, server_factory: Any
) -> None:
    """A server there that answers like Sidemirror but cannot prove it holds the token it hands
    out (an impostor): not switched to, and its token is not kept."""
    server = server_factory()
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    impostor = Decoy(quiet_port({server.port})).start()
    try:
        popup = ext.open_popup()
        popup.get_by_label("Server port").fill(str(impostor.port))
        popup.get_by_role("button", name="Connect").click()
        error = popup.locator("#port-error")
        expect(error).to_contain_text(f"Couldn't connect to :{impostor.port}: Pairing failed")
        expect(error).to_contain_text(f"Still connected to :{server.port}.")
        expect(popup.locator("#status-text")).to_have_text(f"Connected to :{server.port}")
        assert stored(popup, "port") == server.port
        assert stored(popup, "paired") == {"server_id": server.server_id, "port": server.port}
        token = popup.evaluate("async () => (await chrome.storage.session.get('token')).token")
        assert token["value"] == TOKEN and DECOY_TOKEN not in json.dumps(token)
    finally:
        impostor.stop()


@pytest.mark.scans_range
def test_emptying_the_port_goes_back_to_finding_the_server_on_the_range(
    ext: Extension, server_factory: Any, decoy: Decoy, tmp_path: Path
) -> None:
    """A server typed in by port, outside the range, is left when the field is emptied: the
    extension looks on the range again, where discovery finds servers (the test's own, and the
    decoy), instead of staying on the server it was last told about."""
    on_range = server_factory(in_range=True)
    (tmp_path / "typed").mkdir()
    typed = server_factory(home=tmp_path / "typed", avoid=frozenset({on_range.port}))
    assert typed.port not in PORT_RANGE and on_range.port in PORT_RANGE
    popup = ext.open_popup()
    field = popup.get_by_label("Server port")
    field.fill(str(typed.port))
    popup.get_by_role("button", name="Connect").click()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{typed.port}")

    field.fill("")
    popup.get_by_role("button", name="Connect").click()
    offer = popup.locator(f".offer[data-port='{on_range.port}']")
    expect(offer).to_be_visible()
    expect(popup.locator("#status-text")).not_to_have_text(f"Connected to :{typed.port}")
    expect(field).to_have_value("")
    expect(popup.locator("#port-error")).to_have_text("")
    expect(popup.locator("#port-help")).to_contain_text(f"Looking on ports {PORT_RANGE[0]}")
    assert stored(popup, "port") is None
    assert stored(popup, "paired") is None
    assert ext.status(popup)["state"] == "other_server"

    # The user picks the range's server: connected, and found by itself, not pinned.
    offer.get_by_role("button", name="Use it").click()
    expect(popup.locator("#status-text")).to_have_text(f"Connected to :{on_range.port}")
    expect(popup.locator("#port-help")).to_contain_text(f"Found by itself on port {on_range.port}")
    expect(field).to_have_value("")
    assert stored(popup, "paired") == {"server_id": on_range.server_id, "port": on_range.port}
