"""Server test fixtures: an app on a real loopback socket (aiohttp_client), a known token."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app
from sidemirror.panel_credential import PANEL_HEADER
from sidemirror.settings import Settings
from sidemirror.web.rules import PINNED_EXTENSION_ID
from sidemirror.web.state import APP_STATE, AppState

TOKEN = "test-token-0123456789abcdef0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EXT_ORIGIN = f"chrome-extension://{PINNED_EXTENSION_ID}"
NDJSON = {**AUTH, "Content-Type": "application/x-ndjson"}

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


@pytest.fixture
def make_client(
    aiohttp_client: Callable[..., Awaitable[TestClient[Any, Any]]], tmp_path: Path
) -> ClientFactory:
    async def factory(**overrides: Any) -> TestClient[Any, Any]:
        app = create_app(make_settings(tmp_path, **overrides), TOKEN)
        return await aiohttp_client(app)

    return factory


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
    import json

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
