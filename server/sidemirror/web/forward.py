"""`GET /api/forward/ws`: receive another machine's agent files from `sidemirror forward`.

The exchange (token required, like every route that writes):

    forwarder → {"type": "hello", "label": "devbox", "version": 1}
    server    → {"type": "welcome", "offsets": {"claude/<project>/<id>.jsonl": 1234, …}}
    forwarder → binary frame: header JSON, "\\n", the file's bytes from header.offset
                ({"file": KEY, "offset": N, "more": true|false}) — or a header alone
                ({"file": KEY, "truncate": N}); `more`: the file's backlog goes on at once
    server    → {"type": "ack", "file": KEY, "size": S}   (one per frame, in order)

`S` is the mirror's size after the frame: the next offset to send. A sender that finds `S`
smaller than it expected (a gap, after frames were lost with a connection) resumes from `S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from aiohttp import WSMsgType, web

from sidemirror.core.host_link import HostLink
from sidemirror.sources.remote.hosts import RemoteHosts
from sidemirror.sources.remote.mirror import HostMirror, MirrorError, check_label

logger = logging.getLogger(__name__)

REMOTE_HOSTS = web.AppKey("remote_hosts", RemoteHosts)
# The open forward links, closed by the server on shutdown: a forwarder never hangs up by itself
# (it waits for acks), so its handler would hold the server's exit for the whole grace period.
FORWARD_LINKS = web.AppKey("forward_links", set[web.WebSocketResponse])
# How long a closing handshake may take at shutdown before the link is dropped anyway.
CLOSE_GRACE_S = 0.3
PROTOCOL_VERSION = 1
# A frame carries up to this many bytes of a file; the forwarder sends less.
FORWARD_FRAME_LIMIT = 8 << 20


async def forward_ws(request: web.Request) -> web.WebSocketResponse:
    hosts = request.app[REMOTE_HOSTS]
    ws = web.WebSocketResponse(max_msg_size=FORWARD_FRAME_LIMIT + 4096, heartbeat=30)
    await ws.prepare(request)
    links = request.app[FORWARD_LINKS]
    links.add(ws)
    mirror: HostMirror | None = None
    link: HostLink | None = None
    try:
        async for msg in ws:
            if msg.type == WSMsgType.TEXT and mirror is None:
                hello = _hello(msg.data)
                mirror = await hosts.ensure(hello)
                link = hosts.attach(hello)  # the panel shows the host connected
                await ws.send_json({"type": "welcome", "offsets": mirror.sizes()})
            elif msg.type == WSMsgType.BINARY and mirror is not None:
                key, size = _apply(mirror, msg.data)
                await ws.send_json({"type": "ack", "file": key, "size": size})
            else:
                raise MirrorError("expected a hello first, then binary file frames")
    except MirrorError as exc:
        logger.warning("forward: %s", exc)
        await _refuse(ws, str(exc), 4400)
    except OSError as exc:  # disk full, permissions: the forwarder retries from the acked size
        logger.error("forward: cannot write the mirror: %s", exc)
        await _refuse(ws, f"cannot write the mirror: {exc.strerror or exc}", 1011)
    finally:
        links.discard(ws)
        if link is not None:  # gone: the panel says since when
            link.detach()
    return ws


async def close_forward_links(app: web.Application) -> None:
    """On shutdown: close every open link with 1001 (going away), which the forwarder retries
    like any lost connection, resuming from the mirror's size when a server is back."""

    async def close(ws: web.WebSocketResponse) -> None:
        # A peer that does not answer the close: the runner drops its connection.
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(
                ws.close(code=1001, message=b"server shutting down"), CLOSE_GRACE_S
            )

    links: set[web.WebSocketResponse] = app[FORWARD_LINKS]
    open_links = list(links)  # a copy: each handler removes its own on the way out
    await asyncio.gather(*(close(ws) for ws in open_links))


async def _refuse(ws: web.WebSocketResponse, reason: str, code: int) -> None:
    if not ws.closed:
        await ws.send_json({"type": "error", "error": reason})
        await ws.close(code=code, message=reason[:100].encode())


def _hello(data: str) -> str:
    try:
        hello: Any = json.loads(data)
    except ValueError:
        raise MirrorError("hello is not JSON") from None
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        raise MirrorError("the first message must be a hello")
    if hello.get("version") != PROTOCOL_VERSION:
        raise MirrorError(f"forward protocol {hello.get('version')!r} (this server: 1)")
    return check_label(str(hello.get("label", "")))


def _apply(mirror: HostMirror, frame: bytes) -> tuple[str, int]:
    head, sep, payload = frame.partition(b"\n")
    try:
        header: Any = json.loads(head)
    except ValueError:
        raise MirrorError("frame header is not JSON") from None
    if not sep or not isinstance(header, dict) or not isinstance(header.get("file"), str):
        raise MirrorError("frame header needs a file")
    key: str = header["file"]
    if isinstance(header.get("truncate"), int) and header["truncate"] >= 0:
        return key, mirror.truncate(key, header["truncate"])
    offset = header.get("offset")
    if not isinstance(offset, int) or offset < 0:
        raise MirrorError("frame header needs an offset")
    return key, mirror.append(key, offset, payload, more=header.get("more") is True)
