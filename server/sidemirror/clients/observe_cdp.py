"""`sidemirror observe-cdp`: a Chrome started with `--remote-debugging-port` as activity source.

One browser-level WebSocket (found via `GET /json/version`) with flattened sessions: target
discovery reports tabs opened and closed, and every page target gets its own session with
Page/Runtime/Network/Log enabled. New targets are auto-attached paused
(`waitForDebuggerOnStart`) and resumed only once their domains are on, so a new tab's first
navigation and errors are not lost. `CdpMapper` turns events into entries; a single sender task
POSTs them in order, batched, to the running server. When the browser goes away the observer
reconnects with backoff; when the server goes away it re-reads the runtime file, and it sends
the token only to a port that proves to hold that server (server_check.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from sidemirror.clients.cdp_events import CdpMapper
from sidemirror.runtime_file import UntrustedRuntimeFile, read_runtime_file
from sidemirror.server_check import UntrustedServer, check_server

logger = logging.getLogger(__name__)
DOMAINS = ("Page.enable", "Runtime.enable", "Network.enable", "Log.enable")
MAX_BACKLOG = 10_000
BATCH = 200


class CdpError(Exception):
    pass


class CdpConnection:
    """Request/response over one CDP WebSocket; events go to `on_event` in arrival order."""

    def __init__(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        on_event: Callable[[str, dict[str, Any], str | None], None],
    ) -> None:
        self.ws = ws
        self.on_event = on_event
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def call(
        self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        msg_id = next(self._ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self.ws.send_str(json.dumps(message))
            return await future
        finally:
            self._pending.pop(msg_id, None)

    async def read_loop(self) -> None:
        """Until the socket closes; pending calls then fail instead of hanging."""
        try:
            async for frame in self.ws:  # ends at the close frame
                if frame.type is not aiohttp.WSMsgType.TEXT:
                    break  # an error (or a binary frame, which CDP never sends)
                msg = json.loads(frame.data)
                if "id" in msg:
                    future = self._pending.get(msg["id"])
                    if future is not None and not future.done():
                        if "error" in msg:
                            future.set_exception(CdpError(str(msg["error"].get("message"))))
                        else:
                            future.set_result(msg.get("result") or {})
                elif "method" in msg:
                    self.on_event(msg["method"], msg.get("params") or {}, msg.get("sessionId"))
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(CdpError("browser connection closed"))


class ServerPoster:
    """Sends entries to the running server, in order; survives the server restarting."""

    def __init__(self, runtime_dir: Path, http: aiohttp.ClientSession) -> None:
        self.runtime_dir = runtime_dir
        self.http = http
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(MAX_BACKLOG)
        self.dropped = 0

    def put(self, entry: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(entry)
        except asyncio.QueueFull:
            self.dropped += 1  # the server is down or slow: keep memory bounded

    async def run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty() and len(batch) < BATCH:
                batch.append(self.queue.get_nowait())
            await self._send(batch)

    async def _send(self, batch: list[dict[str, Any]]) -> None:
        for attempt in range(3):
            try:
                info = read_runtime_file(self.runtime_dir)
            except UntrustedRuntimeFile as exc:  # it changed after the check at start
                logger.warning("%s", exc)
                info = None
            if info is not None:
                try:  # the port may hold something else since its server went
                    await asyncio.to_thread(check_server, info)
                except UntrustedServer as exc:
                    logger.warning("%s", exc)
                    info = None
            if info is None:
                logger.warning("no running sidemirror server (runtime dir %s)", self.runtime_dir)
            else:
                url = f"http://127.0.0.1:{info['port']}/api/activity"
                headers = {"Authorization": f"Bearer {info['token']}"}
                try:
                    async with self.http.post(url, json=batch, headers=headers) as resp:
                        if resp.status == 200:
                            return
                        logger.warning(
                            "server refused activity: %s %s", resp.status, (await resp.text())[:300]
                        )
                        return  # a 4xx will not get better by retrying
                except (aiohttp.ClientError, OSError) as exc:
                    logger.warning("cannot reach sidemirror server: %s", exc)
            await asyncio.sleep(0.5 * (attempt + 1))
        self.dropped += len(batch)


class Observer:
    """One browser connection's worth of state: mapper, sessions, attach bookkeeping."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], workspace: str | None = None):
        self.mapper = CdpMapper(workspace)
        self.emit = emit
        self.conn: CdpConnection | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.started = False
        self.held: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}

    def on_event(self, method: str, params: dict[str, Any], session_id: str | None) -> None:
        if method == "Target.attachedToTarget":
            self._attached(params)
        elif method == "Target.targetDestroyed":
            self._emit_all(self.mapper.destroyed(str(params.get("targetId"))))
        elif method == "Target.detachedFromTarget":
            self.mapper.detached(str(params.get("sessionId")))
        elif session_id in self.held:
            self.held[session_id].append((method, params))
        else:
            self._emit_all(self.mapper.handle(method, params, session_id))

    def _emit_all(self, entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            self.emit(entry)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _attached(self, params: dict[str, Any]) -> None:
        session_id = str(params.get("sessionId"))
        info = params.get("targetInfo") or {}
        target_id = str(info.get("targetId"))
        if info.get("type") != "page" or any(
            p.target_id == target_id for p in self.mapper.pages.values()
        ):
            self._spawn(self._release(session_id))  # not a page, or a second session to one
            return
        is_new = self.started
        self._emit_all(
            self.mapper.attached(session_id, target_id, str(info.get("url", "")), is_new)
        )
        # Events are held until the page's current document is known, so a new tab's first
        # navigation is reported before what happened in it, whatever CDP's timing.
        self.held[session_id] = []
        self._spawn(self._setup(session_id, is_new))

    async def _release(self, session_id: str) -> None:
        if self.conn is None:
            return
        with contextlib.suppress(CdpError):
            await self.conn.call("Runtime.runIfWaitingForDebugger", session_id=session_id)
            await self.conn.call("Target.detachFromTarget", {"sessionId": session_id})

    async def _setup(self, session_id: str, is_new: bool) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            await asyncio.gather(*(conn.call(m, session_id=session_id) for m in DOMAINS))
            tree = await conn.call("Page.getFrameTree", session_id=session_id)
            self._emit_all(self.mapper.frame_tree(session_id, tree.get("frameTree") or {}, is_new))
        except CdpError as exc:  # the tab closed while we were attaching
            logger.debug("attach to session %s failed: %s", session_id, exc)
        finally:
            for method, params in self.held.pop(session_id, []):
                self._emit_all(self.mapper.handle(method, params, session_id))
        with contextlib.suppress(CdpError):
            await conn.call("Runtime.runIfWaitingForDebugger", session_id=session_id)

    async def run(self, conn: CdpConnection) -> None:
        """Watch until the browser connection closes."""
        self.conn = conn
        reader = asyncio.create_task(conn.read_loop())
        try:
            await conn.call("Target.setDiscoverTargets", {"discover": True})
            # Existing pages are attached now (not reported as opened); later ones paused.
            await conn.call(
                "Target.setAutoAttach",
                {"autoAttach": True, "flatten": True, "waitForDebuggerOnStart": True},
            )
            targets = (await conn.call("Target.getTargets")).get("targetInfos") or []
            pages = [info for info in targets if info.get("type") == "page"]
            self.mapper.announced.update(str(info.get("targetId")) for info in pages)
            self.started = True
            for info in pages:
                if not info.get("attached"):
                    await conn.call(
                        "Target.attachToTarget", {"targetId": info["targetId"], "flatten": True}
                    )
            await reader
        finally:
            reader.cancel()
            for task in list(self.tasks):
                task.cancel()


async def browser_ws_url(http: aiohttp.ClientSession, cdp: str) -> str:
    async with http.get(cdp.rstrip("/") + "/json/version") as resp:
        data = await resp.json(content_type=None)
    return str(data["webSocketDebuggerUrl"])


async def observe(
    cdp: str, runtime_dir: Path, workspace: str | None, max_backoff_s: float = 10.0
) -> None:
    """Run until cancelled: connect, watch, and reconnect with backoff when the browser goes."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        poster = ServerPoster(runtime_dir, http)
        sender = asyncio.create_task(poster.run())
        backoff = 0.25
        try:
            while True:
                try:
                    url = await browser_ws_url(http, cdp)
                    # No size limit (a page's console can log megabytes in one message) and
                    # no heartbeat: the browser is local, and a busy one may answer pings late.
                    async with http.ws_connect(url, max_msg_size=0, autoping=True) as ws:
                        logger.info("observing %s", cdp)
                        backoff = 0.25
                        observer = Observer(poster.put, workspace)
                        await observer.run(CdpConnection(ws, observer.on_event))
                    logger.info("browser connection closed; reconnecting")
                except (
                    OSError,
                    aiohttp.ClientError,
                    CdpError,
                    KeyError,
                    ValueError,
                    TimeoutError,
                ) as exc:
                    logger.info(
                        "browser not reachable at %s (%s); retrying in %.1fs", cdp, exc, backoff
                    )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, max_backoff_s)
        finally:
            sender.cancel()


def run_observe_cdp(cdp: str, runtime_dir: Path, workspace: str | None) -> int:
    """The CLI entry: observe until Ctrl-C / SIGTERM."""
    import signal

    # Refuse at once, with the reason, rather than send the browser's activity to whoever made
    # the runtime file (raises UntrustedRuntimeFile; the CLI prints it).
    read_runtime_file(runtime_dir)

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            if task is not None:
                loop.add_signal_handler(sig, task.cancel)
        await observe(cdp, runtime_dir, workspace)

    with contextlib.suppress(asyncio.CancelledError):
        asyncio.run(main())
    return 0
