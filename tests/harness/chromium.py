"""How Debian Chromium is started with the unpacked extension: the one command line that the
browser tests (browser.py, Playwright's sync API) and the benchmarks (bench/extension_browser.py,
its async API) share. Nothing here imports Playwright or pytest, so either side can use it.
"""

from __future__ import annotations

import os
from typing import Any

from tests.harness.paths import ROOT

EXT_DIR = ROOT / "extension"
EXT_ID = "mboojbmhcigehknaafejhibpmmdjpgbn"  # fixed by the manifest's `key`
CHROMIUM = os.environ.get("SIDEMIRROR_CHROMIUM", "/usr/bin/chromium")
PANEL_SIZE = {"width": 420, "height": 820}
# A browser under test does only what it is made to do: no sync, updates, or first-run pages.
QUIET_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)
# Run in the service worker of a fresh profile: wait for the install handler (it has run once
# the `health` alarm exists; a fresh install probes nothing until a page opens or that alarm
# fires), then pin the extension to `port`, one where no server answers (`ports.parked_port`),
# so it never probes the range, where a user's own server may be.
PARK_JS = """async (port) => {
    for (let i = 0; i < 100 && !(await chrome.alarms.get('health')); i++) {
        await new Promise((r) => setTimeout(r, 50));
    }
    await chrome.storage.local.set({ port });
}"""
# Pin the server port the way the popup does; the answer is the worker's check of that port.
SET_PORT_JS = "async (port) => (await chrome.runtime.sendMessage({type: 'setPort', port})).data"


def launch_options(*extra_args: str) -> dict[str, Any]:
    """The keyword arguments of `launch_persistent_context` (either API) for Chromium with the
    extension loaded, headless, at the side panel's size; `extra_args` end its command line."""
    return {
        "executable_path": CHROMIUM,
        "headless": False,  # `--headless=new` below: the old headless mode cannot load extensions
        "args": [
            f"--disable-extensions-except={EXT_DIR}",
            f"--load-extension={EXT_DIR}",
            "--headless=new",
            *QUIET_FLAGS,
            "--disable-features=DisableLoadExtensionCommandLineSwitch",
            *extra_args,
        ],
        "viewport": PANEL_SIZE,
    }
