"""Server test fixtures: an app on a real loopback socket (aiohttp_client), a known token.

Fixtures only: the helpers the tests import are in support.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app

from tests.harness.auth import TOKEN
from tests.server.support import ClientFactory, make_settings


@pytest.fixture
def make_client(
    aiohttp_client: Callable[..., Awaitable[TestClient[Any, Any]]], tmp_path: Path
) -> ClientFactory:
    async def factory(**overrides: Any) -> TestClient[Any, Any]:
        app = create_app(make_settings(tmp_path, **overrides), TOKEN)
        return await aiohttp_client(app)

    return factory
