"""E2E fixtures: a real `sidemirror serve` subprocess and Debian Chromium with the extension loaded.

No mocks: the extension finds, pairs with and streams from the real server over 127.0.0.1.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright, expect, sync_playwright

sys.path.insert(0, str(Path(__file__).parent))

from support import FIXTURES, Extension, Server, free_port, launch  # noqa: E402

# Assertions wait for a state, never for a time; the default bound (5 s) is sized for an idle
# machine, and the suite must pass on a loaded 2-core one.
expect.set_options(timeout=20_000)


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    """A writable copy of the fixture projects dir (tests append to the transcript)."""
    dest = tmp_path / "claude"
    shutil.copytree(FIXTURES / "claude", dest)
    for f in dest.rglob("*.jsonl"):
        f.chmod(0o644)
    return dest


@pytest.fixture
def server_factory(tmp_path: Path, claude_dir: Path) -> Iterator[Any]:
    started: list[Server] = []

    def make(port: int | None = None, claude: Path | None = None) -> Server:
        server = Server(tmp_path, port or free_port(), claude or claude_dir)
        started.append(server)
        return server.start()

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def server(server_factory: Any) -> Server:
    return server_factory()


@pytest.fixture(scope="module")
def pw() -> Iterator[Playwright]:
    # Module scope, not session: the sync API keeps an event loop running in this thread, which
    # would break the asyncio tests (tests/server, tests/unit) that run after tests/e2e.
    with sync_playwright() as p:
        yield p


@pytest.fixture
def ext(pw: Playwright, tmp_path: Path) -> Iterator[Extension]:
    ctx = launch(pw, tmp_path / "profile")
    extension = Extension(ctx)
    worker = extension.worker()
    # The install handler has run once the alarm exists (it is created there).
    worker.evaluate(
        """async () => {
            for (let i = 0; i < 100; i++) {
                if (await chrome.alarms.get('health')) return;
                await new Promise((r) => setTimeout(r, 50));
            }
        }"""
    )
    yield extension
    ctx.close()
