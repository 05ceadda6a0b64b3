"""Helpers for tests of the app in-process (aiohttp_client on a real loopback socket): its
settings, its state, and requests as the paired extension or an agent's pipe sends them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient
from sidemirror.panel_credential import PANEL_HEADER
from sidemirror.settings import Settings
from sidemirror.web.rules import PINNED_EXTENSION_ID
from sidemirror.web.state import APP_STATE, AppState

from tests.harness.auth import AUTH, NDJSON

EXT_ORIGIN = f"chrome-extension://{PINNED_EXTENSION_ID}"
# A WebSocket handshake's own headers (RFC 6455's sample key), for tests that send the upgrade
# request as a plain GET to see it refused before the 101.
WS_UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}

ClientFactory = Callable[..., Awaitable[TestClient[Any, Any]]]


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "data_dir": tmp_path / "data",
        "runtime_dir": tmp_path / "run",
        "claude_dirs": [],
        "codex_dir": tmp_path / "no-codex",
    }
    base.update(overrides)
    return Settings(**base)


def state_of(client: TestClient[Any, Any]) -> AppState:
    app = client.server.app
    assert isinstance(app, web.Application)
    return app[APP_STATE]


def panel_headers(client: TestClient[Any, Any]) -> dict[str, str]:
    """What the paired extension sends to decide: the token and the panel credential."""
    return {**AUTH, PANEL_HEADER: state_of(client).guard.panel_credential}


async def ingest(
    client: TestClient[Any, Any],
    lines: list[dict[str, Any]],
    *,
    workspace: str = "/home/dev/project",
    session: str = "s1",
) -> dict[str, Any]:
    body = "".join(json.dumps(line) + "\n" for line in lines)
    resp = await client.post(
        "/api/ingest",
        params={"workspace": workspace, "format": "events", "session": session},
        data=body,
        headers=NDJSON,
    )
    assert resp.status == 200, await resp.text()
    result: dict[str, Any] = await resp.json()
    return result
