"""Forward-socket fixtures; the helpers are in support.py."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.server.remote.support import ForwardConnect, forward_auth, socket_of, unix_session


@pytest.fixture
def forward_ws(tmp_path: Path) -> ForwardConnect:
    """`async with forward_ws() as ws`: a WebSocket on the test server's forward socket, with
    the forward token unless `headers` says otherwise."""

    @contextlib.asynccontextmanager
    async def connect(
        path: str = "/api/forward/ws", headers: dict[str, str] | None = None
    ) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
        sent = forward_auth(tmp_path) if headers is None else headers
        async with (
            unix_session(socket_of(tmp_path)) as session,
            session.ws_connect("http://localhost" + path, headers=sent) as ws,
        ):
            yield ws

    return connect
