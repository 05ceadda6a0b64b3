"""Debian Chromium with the real extension loaded, for tests that drive the browser.

A test run never pairs with a server it did not start. A fresh extension contacts no server
until a page opens, so `start_extension` pins it, before that, to a port where nothing can
answer (`parked_port`): a pinned port is the only port the extension probes. Each test then
points it at its own server (`Extension.use_port`), or deliberately unpins it to test discovery.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Worker
from sidemirror.native_host.manifest import install_host

from tests.harness.chromium import (
    CHROMIUM,
    EXT_ID,
    PANEL_SIZE,
    PARK_JS,
    QUIET_FLAGS,
    SET_PORT_JS,
    launch_options,
)
from tests.harness.ports import parked_port
from tests.harness.waiting import wait_until

# In the User-Agent of every request the browser under test makes, so a decoy can tell its
# requests from those of other processes on this machine that probe the range too.
BROWSER_MARK = f"SidemirrorE2E/{os.getpid()}"
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    f"Chrome/{os.environ.get('SIDEMIRROR_UA_CHROME', '156.0.0.0')} Safari/537.36 {BROWSER_MARK}"
)


class Extension:
    """The browser with the extension loaded, plus helpers to reach its contexts."""

    def __init__(self, ctx: BrowserContext) -> None:
        self.ctx = ctx
        self.id = EXT_ID

    def url(self, path: str) -> str:
        return f"chrome-extension://{self.id}/{path}"

    def worker(self, timeout: float = 10_000) -> Worker:
        for w in reversed(self.ctx.service_workers):
            if w.url.startswith(self.url("")):
                return w
        return self.ctx.wait_for_event("serviceworker", timeout=timeout)

    def open(self, path: str, size: dict[str, int] | None = None) -> Page:
        page = self.ctx.new_page()
        page.set_viewport_size(size or PANEL_SIZE)
        page.goto(self.url(path))
        return page

    def open_panel(self) -> Page:
        return self.open("sidepanel/sidepanel.html")

    def open_popup(self) -> Page:
        return self.open("popup/popup.html", {"width": 340, "height": 480})

    def use_port(self, page: Page, port: int) -> dict[str, Any]:
        """Pin the server port the way the popup does, and wait for the worker's check."""
        return page.evaluate(SET_PORT_JS, port)

    def check(self, page: Page) -> dict[str, Any]:
        """Ask the worker for a check now (as a page opening does); the new status."""
        return page.evaluate(
            "async () => (await chrome.runtime.sendMessage({type: 'checkNow'})).data"
        )

    def status(self, page: Page) -> dict[str, Any] | None:
        return page.evaluate(
            "async () => (await chrome.storage.session.get('status')).status || null"
        )

    def badge(self, page: Page) -> str:
        return page.evaluate("() => chrome.action.getBadgeText({})")


def worker_running(ext: Extension, page: Page) -> bool:
    """Whether the extension's service worker is running (a CDP target), without waking it."""
    cdp = ext.ctx.new_cdp_session(page)
    try:
        targets = cdp.send("Target.getTargets")["targetInfos"]
    finally:
        cdp.detach()
    return any(t["type"] == "service_worker" and t["url"].startswith(ext.url("")) for t in targets)


def stop_worker(ext: Extension, page: Page) -> None:
    """Stop the service worker the way Chrome does when it is idle (CDP), and wait until it is."""
    cdp = ext.ctx.new_cdp_session(page)
    try:
        cdp.send("ServiceWorker.enable")
        cdp.send("ServiceWorker.stopAllWorkers")
    finally:
        cdp.detach()
    wait_until(lambda: not worker_running(ext, page), what="service worker stopped")


def install_pairing_host(profile: Path) -> None:
    """The native messaging host the extension pairs through, as `sidemirror extension
    install-host --dir <profile>/NativeMessagingHosts` writes it: Chromium started with a user
    data dir reads host manifests from that folder. It answers for the servers of this test
    (their runtime files are in `<profile's folder>/runtime`)."""
    install_host(
        [profile / "NativeMessagingHosts"],
        profile.parent / "pairing-host",
        [EXT_ID],
        [profile.parent / "runtime"],
    )


def launch(
    pw: Playwright,
    profile: Path,
    *,
    dark: bool = False,
    locale: str | None = None,
    pairing_host: bool = True,
) -> BrowserContext:
    """Chromium with the extension loaded; with the pairing host installed for it, unless
    `pairing_host` is False."""
    if pairing_host:
        install_pairing_host(profile)
    return pw.chromium.launch_persistent_context(
        str(profile),
        **launch_options(
            f"--user-agent={USER_AGENT}",
            # An ordinary website for the overlay tests, served locally (test_overlay.py).
            "--host-resolver-rules=MAP shop.test 127.0.0.1",
        ),
        color_scheme="dark" if dark else "light",
        locale=locale,
    )


def plain_chromium(pw: Playwright) -> Browser:
    """Debian Chromium without the extension, for pages a test opens as any reader would
    (the panel's bench page, an exported file)."""
    return pw.chromium.launch(executable_path=CHROMIUM, args=["--headless=new", *QUIET_FLAGS])


def start_extension(pw: Playwright, profile: Path, **options: Any) -> Extension:
    """Chromium with the extension (`launch`, with its `options`), pinned to `parked_port()`
    before it looks for any server."""
    ext = Extension(launch(pw, profile, **options))
    ext.worker().evaluate(PARK_JS, parked_port())
    return ext
