"""E2E fixtures: a real `sidemirror serve` subprocess and Debian Chromium with the extension loaded.

No mocks: the extension finds, pairs with and streams from the real server over 127.0.0.1.
A decoy Sidemirror server sits on the port range for the whole session; after each test,
`decoy_untouched` checks the browser under test never sent it anything (tests marked
`scans_range`, which exercise discovery on purpose, may have asked its `/health`, nothing more),
and never the test token.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright, expect, sync_playwright
from sidemirror.listen_socket import PORT_RANGE

from tests.e2e.decoy import Decoy
from tests.e2e.support import FIXTURES
from tests.harness.auth import TOKEN
from tests.harness.browser import BROWSER_MARK, Extension, start_extension
from tests.harness.ports import PORT_RANGE_GROUP, quiet_port, range_port
from tests.harness.server import Server, ServerExited

# Test files import each other's helpers by module name (`from test_a11y import ...`).
sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "scans_range: the test makes the extension probe the port range on purpose"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `pytest -n` (scripts/test), every browser test runs on one worker, one at a time:
    they share the decoy on the port range, and a discovery test must see no other test's
    server there. The other worker takes the rest of the suite meanwhile."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.xdist_group(PORT_RANGE_GROUP))


@pytest.fixture(scope="session")
def decoy() -> Iterator[Decoy]:
    """On 47470 (where a fresh extension looks first) if free, else the first free port of the
    range: a user's real server may hold 47470, and then it is that server the tests avoid."""
    # Bound, not checked then bound: the range is inside the ephemeral ports, so any connection
    # on the machine may hold one of them as its local port between a check and a bind.
    for port in PORT_RANGE:
        try:
            running = Decoy(port).start()
            break
        except OSError:
            continue
    else:
        raise RuntimeError("no free port in 47470-47479 for the decoy")
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def decoy_untouched(request: pytest.FixtureRequest, decoy: Decoy) -> Iterator[Decoy]:
    mark = time.monotonic()
    yield decoy
    seen = decoy.since(mark, BROWSER_MARK)
    assert not [s for s in seen if s.carries(TOKEN)], "the decoy received the test token"
    if request.node.get_closest_marker("scans_range"):
        unexpected = [
            f"{s.method} {s.path}" for s in seen if not (s.method == "GET" and s.path == "/health")
        ]
        assert unexpected == [], f"the decoy was asked more than /health: {unexpected}"
    else:
        assert [f"{s.method} {s.path}" for s in seen] == [], "the extension contacted the decoy"


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

    def make(
        port: int | None = None,
        claude: Path | None = None,
        *,
        in_range: bool = False,
        avoid: frozenset[int] = frozenset(),
        home: Path | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> Server:
        """A started server: on `port`, else on a free port above the probe range (tests pin
        the extension to it), or in the range for tests of discovery (`in_range`: from the
        bottom, away from the top ports other checkouts' tests take first)."""
        tried: set[int] = set(avoid)
        while True:
            chosen = port or (
                range_port(prefer=list(PORT_RANGE), avoid=tried) if in_range else quiet_port(tried)
            )
            # With the access log (`Server.requests`); the runtime dir is where the browser's
            # pairing host looks (`install_pairing_host`).
            server = Server(
                home or tmp_path,
                *extra_args,
                port=chosen,
                claude_dir=claude or claude_dir,
                runtime_dir=tmp_path / "runtime",
                codex_dir=(home or tmp_path) / "no-codex",
                log_level=None,
                access_log=True,
                ready="ok",
            )
            started.append(server)
            try:
                return server.start()
            except ServerExited:
                # A port we chose was taken before our server bound it: choose another.
                tried.add(server.port)
                if port is not None or len(tried) >= len(avoid) + 3:
                    raise

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
    extension = start_extension(pw, tmp_path / "profile")
    yield extension
    extension.ctx.close()
