"""Finding 2: a same-user relay (an `ssh -R` forward, socat, an editor's port forward) carries
another OS user's requests to the server on a connection the server's own user owns, so they
pass the OS-owner check. Through one, the other user must get neither the token nor the panel
credential, and must not decide a held permission request.

The relay here is a TCP relay run by this (root) process in front of a real server; the client
is curl run as uid 65534 (`setpriv`)."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.harness.auth import TOKEN
from tests.harness.waiting import until
from tests.server.attention.hook_support import event, hook_server
from tests.server.support import EXT_ORIGIN, ClientFactory, state_of
from tests.server.web.test_security_part2 import NOBODY, NONCE, curl_as

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("curl"),
    reason="needs root (to run a client as another uid), setpriv and curl",
)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


async def start_relay(target_port: int) -> asyncio.Server:
    """What `ssh -R` or `socat TCP-LISTEN:…,fork TCP:127.0.0.1:PORT` does, in this process."""

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        to_reader, to_writer = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(
            _pipe(reader, to_writer), _pipe(to_reader, writer), return_exceptions=True
        )

    return await asyncio.start_server(relay, "127.0.0.1", 0)


@pytest.fixture
async def relays() -> AsyncIterator[list[asyncio.Server]]:
    servers: list[asyncio.Server] = []
    yield servers
    for server in servers:
        server.close()


async def test_another_user_through_a_same_user_relay_gets_no_token_and_cannot_decide(
    make_client: ClientFactory, tmp_path: Path, relays: list[asyncio.Server]
) -> None:
    server = await hook_server(make_client, tmp_path)
    hook = await server.start_hook(event("PermissionRequest"))

    async def pending_id() -> str | None:
        rows = (await server.get("/api/decisions"))["decisions"]
        return rows[0]["id"] if rows else None

    request_id = await until(pending_id)
    relay = await start_relay(server.client.port)
    relays.append(relay)
    via = relay.sockets[0].getsockname()[1]
    # The other user names the server's own port in Host, as an `ssh -R P:127.0.0.1:P` gives.
    host = ("-H", f"Host: 127.0.0.1:{server.client.port}")
    ext = ("-H", f"Origin: {EXT_ORIGIN}")
    json_body = ("-H", "Content-Type: application/json", "-X", "POST")
    panel = state_of(server.client).guard.panel_credential

    async def through_relay(path: str, *args: str) -> tuple[int, str]:
        status, body = await curl_as(NOBODY, f"http://127.0.0.1:{via}{path}", *host, *args)
        assert TOKEN not in body and panel not in body, (path, body)
        return status, body

    # Directly, the other user is refused as such; through the relay, the server sees its own
    # user (the relay's connection): the owner check passes, as it did in the finding.
    direct, _ = await curl_as(NOBODY, f"http://127.0.0.1:{server.client.port}/api/workspaces")
    assert direct == 403
    assert (await through_relay("/api/workspaces"))[0] == 401
    # No pairing route answers anything without proof.
    assert (await through_relay("/api/pair", *ext, *json_body, "-d", "{}"))[0] == 403
    assert (await through_relay("/api/pair", *ext, *json_body, "-d", '{"code":"ABC-DEF"}'))[
        0
    ] == 403
    assert (await through_relay("/api/pair/code", *json_body))[0] == 401
    assert (await through_relay(f"/api/identify?nonce={NONCE}"))[0] == 200  # a proof, no token
    assert (await through_relay("/health"))[0] == 200
    # Nor can it decide, Origin or not.
    allow = ("-d", '{"behavior":"allow"}')
    for args in ((), ext):
        status, _ = await through_relay(f"/api/decisions/{request_id}", *json_body, *args, *allow)
        assert status == 401
    assert hook.returncode is None
    assert await pending_id() == request_id  # still held for the user's own panel
    hook.kill()
    await hook.wait()
