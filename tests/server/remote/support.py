"""Reaching the forward socket of a test server (web/forward_listener.py): a Unix socket beside
the runtime file, with its own token in the data dir."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
from sidemirror.forward_files import forward_socket_path, read_forward_token

ForwardConnect = Callable[..., contextlib.AbstractAsyncContextManager[Any]]


def socket_of(tmp_path: Path) -> Path:
    return forward_socket_path(tmp_path / "run", tmp_path / "data")


def forward_auth(tmp_path: Path) -> dict[str, str]:
    token = read_forward_token(tmp_path / "data")
    assert token, "the server made no forward token"
    return {"Authorization": f"Bearer {token}"}


@contextlib.asynccontextmanager
async def unix_session(path: Path) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(path))) as session:
        yield session
