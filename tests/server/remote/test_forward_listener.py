"""The forward socket exposes forwarding only: `/api/forward/ws` with the forward token, to this OS
user only; the main port has no forward route and refuses the forward token."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.harness.auth import AUTH
from tests.server.remote.support import ForwardConnect, forward_auth, socket_of, unix_session
from tests.server.support import ClientFactory, make_settings

# What else the main port serves: none of it may answer on the forward socket.
MAIN_ROUTES = [
    ("GET", "/health"),
    ("GET", "/api/identify"),
    ("POST", "/api/pair"),
    ("POST", "/api/pair/code"),
    ("GET", "/api/workspaces"),
    ("GET", "/api/decisions"),
    ("POST", "/api/decisions/r1"),
    ("GET", "/api/attention"),
    ("POST", "/api/ingest"),
    ("POST", "/mcp"),
    ("GET", "/api/forward/ws/../../api/workspaces"),
]


@pytest.mark.parametrize(("method", "path"), MAIN_ROUTES)
async def test_the_forward_socket_serves_nothing_but_the_forward_route(
    make_client: ClientFactory, tmp_path: Path, method: str, path: str
) -> None:
    await make_client()
    async with unix_session(socket_of(tmp_path)) as session:
        resp = await session.request(
            method, "http://localhost" + path, headers=forward_auth(tmp_path)
        )
        assert resp.status == 404, await resp.text()


async def test_the_forward_token_is_refused_on_the_main_port(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client = await make_client()
    for path in ("/api/workspaces", "/api/decisions", "/api/attention"):
        resp = await client.get(path, headers=forward_auth(tmp_path))
        assert resp.status == 401, path
    decided = await client.post(
        "/api/decisions/r1", json={"decision": "allow"}, headers=forward_auth(tmp_path)
    )
    assert decided.status in (401, 403)


async def test_the_main_port_has_no_forward_route(make_client: ClientFactory) -> None:
    client = await make_client()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        async with client.ws_connect("/api/forward/ws", headers=AUTH):
            pass
    assert refused.value.status == 404


async def test_the_main_token_is_refused_on_the_forward_socket(
    make_client: ClientFactory, forward_ws: ForwardConnect
) -> None:
    await make_client()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        async with forward_ws(headers=AUTH):
            pass
    assert refused.value.status == 401


async def test_the_socket_is_0600_in_a_0700_folder_and_the_token_0600_whatever_the_umask(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    old = os.umask(0)
    try:
        await make_client()
    finally:
        os.umask(old)
    sock = socket_of(tmp_path)
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    token = tmp_path / "data" / "forward-token"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600


async def test_the_forward_token_is_kept_across_restarts(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    first = await make_client()
    token = forward_auth(tmp_path)
    await first.close()
    assert not socket_of(tmp_path).exists()  # the socket leaves with its server
    await make_client()
    assert forward_auth(tmp_path) == token


# --- another OS user -------------------------------------------------------------------------

NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
# Connects as the other user and sends the owner's own token: what comes back, or the error.
PROBE = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print("refused:", type(exc).__name__); sys.exit(0)
s.sendall(("GET /api/forward/ws HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: Upgrade\\r\\n"
           "Upgrade: websocket\\r\\nSec-WebSocket-Version: 13\\r\\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n"
           "Authorization: " + sys.stdin.read() + "\\r\\n\\r\\n").encode())
print(s.recv(200).decode(errors="replace").splitlines()[0])
"""


async def _as_nobody(sock: Path, authorization: str) -> str:
    """What the other user gets, probing with the owner's own token (sent on stdin: not in
    `ps`). A subprocess the loop waits on: the server answering it runs on this loop."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    assert python is not None
    probe = await asyncio.create_subprocess_exec(
        *NOBODY, python, "-c", PROBE, str(sock),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(probe.communicate(authorization.encode()), 30)
    assert probe.returncode == 0
    return out.decode().strip()


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder any user may pass through (0711), unlike pytest's: what stops the other user
    must be the server's own folder and socket modes, not where the test happens to run."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to act as another user")
    top = Path(tempfile.mkdtemp(prefix="smfwd-", dir="/tmp"))
    top.chmod(0o711)
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


async def test_another_os_user_cannot_connect_to_the_forward_socket(
    make_client: ClientFactory, open_tmp: Path
) -> None:
    settings = make_settings(open_tmp)
    await make_client(runtime_dir=settings.runtime_dir, data_dir=settings.data_dir)
    sock = socket_of(open_tmp)
    bearer = forward_auth(open_tmp)["Authorization"]
    # The server's runtime folder (0700) keeps the other user from even reaching the socket.
    assert await _as_nobody(sock, bearer) == "refused: PermissionError"
    # The socket's own mode (0600) keeps them out when the folder is passable.
    sock.parent.chmod(0o711)
    assert await _as_nobody(sock, bearer) == "refused: PermissionError"
    # And the peer's uid, when someone loosened the socket itself: 403 even with the token.
    sock.chmod(0o666)
    assert (await _as_nobody(sock, bearer)).startswith("HTTP/1.1 403")
