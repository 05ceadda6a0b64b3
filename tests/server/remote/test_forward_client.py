"""`sidemirror forward`'s client on the forward socket: refusals that retrying cannot fix end it
with the server's reason; a refused token is retried; the files arrive otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sidemirror.clients.forward import (
    Forwarder,
    ForwardError,
    claude_root,
    read_token_file,
    socket_of,
)

from tests.server.remote.support import forward_auth
from tests.server.remote.support import socket_of as forward_socket
from tests.server.support import ClientFactory

LINE = b'{"type":"user","cwd":"/home/dev/app","sessionId":"s1","message":{"content":"hi"}}\n'


def _forwarder(tmp_path: Path, token: str, label: str = "devbox") -> Forwarder:
    projects = tmp_path / "remote-claude"
    (projects / "-home-dev-app").mkdir(parents=True, exist_ok=True)
    (projects / "-home-dev-app" / "s1.jsonl").write_bytes(LINE)
    return Forwarder(forward_socket(tmp_path), token, label, [claude_root(projects)])


def _token(tmp_path: Path) -> str:
    return forward_auth(tmp_path)["Authorization"].removeprefix("Bearer ")


async def _until_mirrored(tmp_path: Path) -> None:
    """Until the server's mirror of the forwarded file holds its line, exactly."""
    mirror = tmp_path / "data" / "remote" / "devbox" / "claude" / "-home-dev-app" / "s1.jsonl"
    for _ in range(500):
        if mirror.exists() and mirror.read_bytes() == LINE:
            break
        await asyncio.sleep(0.02)
    assert mirror.read_bytes() == LINE


async def test_the_forwarder_sends_its_files_over_the_socket(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    await make_client()
    stop = asyncio.Event()
    run = asyncio.create_task(_forwarder(tmp_path, _token(tmp_path)).run(stop))
    try:
        await _until_mirrored(tmp_path)
    finally:
        stop.set()
        await asyncio.wait_for(run, 10)


async def test_a_refused_token_is_retried_saying_why_and_read_again_from_its_file(
    make_client: ClientFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A forwarder started with a stale token (the server's was replaced) waits instead of
    exiting, says why each time, and goes on once the user puts the new token in its file."""
    await make_client()
    token_file = tmp_path / "token"
    token_file.write_text("not-the-token\n")
    token_file.chmod(0o600)
    forwarder = _forwarder(tmp_path, "not-the-token")
    forwarder.token_source = lambda: read_token_file(token_file)
    stop = asyncio.Event()
    run = asyncio.create_task(forwarder.run(stop))
    try:
        for _ in range(500):
            if caplog.text.count("refused the forward token (401)") >= 2:
                break
            await asyncio.sleep(0.02)
        assert caplog.text.count("refused the forward token (401)") >= 2, caplog.text
        assert not run.done()
        token_file.write_text(_token(tmp_path) + "\n")
        await _until_mirrored(tmp_path)
    finally:
        stop.set()
        await asyncio.wait_for(run, 10)


async def test_a_host_past_max_hosts_ends_the_forwarder_with_the_reason(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    await make_client(max_hosts=0)
    with pytest.raises(ForwardError, match=r"at most 0 forwarded hosts.*--max-hosts"):
        await asyncio.wait_for(_forwarder(tmp_path, _token(tmp_path)).run(asyncio.Event()), 30)


@pytest.mark.parametrize("to", ["http://127.0.0.1:47470", "unix:", "/run/x.sock"])
def test_to_must_name_a_unix_socket(to: str) -> None:
    with pytest.raises(ForwardError, match="unix:PATH"):
        socket_of(to)
