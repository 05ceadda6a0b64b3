"""`sidemirror acp-tap -- AGENT_CMD...`: a transparent stdio proxy between an editor and an agent.

The editor launches the tap instead of the agent. Bytes are copied both ways exactly as read
(never re-encoded), and the copying never waits on anything else. Beside it, an observer splits
each direction into JSON-RPC lines and queues what describes the session (`session/update`
notifications, prompts and their responses, permission requests) in the envelope the `acp`
ingest format reads: `{"kind", "method", "payload", "ts"}`. A sender drains that bounded queue to
the server's WebSocket ingest, reading the port and token from the runtime file at each attempt
and checking that the port holds that server before the token is sent (server_check.py);
when the server is down or goes away it retries quietly (the oldest records are dropped once the
queue is full), so the editor never notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections import deque
from pathlib import Path
from typing import Any

import aiohttp

from sidemirror.core.clock import now_iso
from sidemirror.runtime_file import UntrustedRuntimeFile, read_runtime_file
from sidemirror.server_check import UntrustedServer, check_server

CHUNK = 65536
MAX_LINE = 8 * 1024 * 1024
QUEUE_LIMIT = 10_000
RETRY_MIN_S, RETRY_MAX_S = 0.5, 15.0
FORWARDED = frozenset({"session/update", "session/request_permission", "session/prompt"})


class Observer:
    """Turns each direction's bytes into envelopes (never raises: it only watches)."""

    def __init__(self, outbox: deque[dict[str, Any]], workspace: str | None) -> None:
        self.outbox = outbox
        self.workspace = workspace
        self.buffers = {"client": bytearray(), "agent": bytearray()}
        self.requests: dict[Any, tuple[str, dict[str, Any]]] = {}  # id -> (method, params)

    def feed(self, side: str, data: bytes) -> None:
        buf = self.buffers[side]
        buf += data
        while (nl := buf.find(b"\n")) >= 0:
            line = bytes(buf[:nl])
            del buf[: nl + 1]
            self._line(side, line)
        if len(buf) > MAX_LINE:
            buf.clear()  # not a JSON-RPC line we could use; the bytes themselves passed through

    def _line(self, side: str, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if isinstance(msg, dict):
            self._message(side, msg)

    def _message(self, side: str, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        raw = msg.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if isinstance(method, str):
            if "id" in msg:
                self.requests[(side, msg["id"])] = (method, params)
            if method in ("session/new", "session/load") and self.workspace is None:
                cwd = params.get("cwd")
                self.workspace = cwd if isinstance(cwd, str) and cwd else None
            if method in FORWARDED:
                kind = "request" if "id" in msg else "notification"
                self._queue({"kind": kind, "method": method, "payload": params})
            return
        # A response answers a request from the other side.
        other = "client" if side == "agent" else "agent"
        request = self.requests.pop((other, msg.get("id")), None)
        if request is None:
            return
        method, req_params = request
        if method == "session/prompt":
            raw = msg.get("result")
            result: dict[str, Any] = raw if isinstance(raw, dict) else {}
            payload = {**result, "sessionId": req_params.get("sessionId")}
            record: dict[str, Any] = {"kind": "response", "method": method, "payload": payload}
            if "error" in msg:
                record["error"] = msg["error"]
            self._queue(record)
        elif method in ("session/new", "session/load") and isinstance(msg.get("result"), dict):
            self._queue({"kind": "response", "method": method, "payload": msg["result"]})

    def _queue(self, record: dict[str, Any]) -> None:
        record["ts"] = now_iso()
        record["_workspace"] = self.workspace or os.getcwd()
        self.outbox.append(record)  # a full deque drops its oldest record


class Sender:
    """Drains the outbox to `GET /api/ingest/ws`, one connection per workspace, retrying quietly."""

    def __init__(self, outbox: deque[dict[str, Any]], runtime_dir: Path | None) -> None:
        self.outbox = outbox
        self.runtime_dir = runtime_dir
        self.wakeup = asyncio.Event()

    def runtime_path(self) -> Path:
        if self.runtime_dir is not None:
            return self.runtime_dir
        from sidemirror.runtime_file import default_runtime_dir

        return default_runtime_dir()

    def server(self) -> dict[str, Any] | None:
        """The running server's port and token; None when there is none we can trust (an
        untrusted runtime file was refused at start, so one now is a change mid-run)."""
        try:
            return read_runtime_file(self.runtime_path())
        except UntrustedRuntimeFile:
            return None

    async def run(self) -> None:
        delay = RETRY_MIN_S
        async with aiohttp.ClientSession() as http:
            while True:
                await self._wait_for_work()
                try:
                    await self._drain(http)
                    delay = RETRY_MIN_S
                except (TimeoutError, aiohttp.ClientError, OSError, ValueError):
                    await asyncio.sleep(delay)
                    delay = min(RETRY_MAX_S, delay * 2)

    async def _wait_for_work(self) -> None:
        while not self.outbox:
            self.wakeup.clear()
            await self.wakeup.wait()

    async def _drain(self, http: aiohttp.ClientSession) -> None:
        info = self.server()
        if info is None:
            raise OSError("no running server")
        try:  # the port may hold something else since its server went (server_check.py)
            await asyncio.to_thread(check_server, info)
        except UntrustedServer as exc:
            raise OSError(str(exc)) from None  # retried quietly: our server may come back
        workspace = str(self.outbox[0]["_workspace"])
        url = f"http://127.0.0.1:{int(info['port'])}/api/ingest/ws"
        params = {"workspace": workspace, "format": "acp"}
        headers = {"Authorization": f"Bearer {info['token']}"}
        async with http.ws_connect(url, params=params, headers=headers, heartbeat=30) as ws:
            while True:
                await self._wait_for_work()
                record = self.outbox[0]
                if record["_workspace"] != workspace:
                    return  # the next records belong to another workspace: reconnect
                body = {k: v for k, v in record.items() if k != "_workspace"}
                await ws.send_str(json.dumps(body))
                reply = await asyncio.wait_for(ws.receive(), timeout=10)
                if reply.type != aiohttp.WSMsgType.TEXT:
                    raise OSError("ingest connection closed")
                if self.outbox and self.outbox[0] is record:
                    self.outbox.popleft()  # acknowledged: it is in the server's journal


async def _pump(
    reader: asyncio.StreamReader, write: Any, side: str, observer: Observer, sender: Sender
) -> None:
    while True:
        data = await reader.read(CHUNK)
        if not data:
            return
        await write(data)
        with contextlib.suppress(Exception):  # the observer must never disturb the proxy
            observer.feed(side, data)
            sender.wakeup.set()


async def run_tap(agent_cmd: list[str], workspace: str | None, runtime_dir: Path | None) -> int:
    loop = asyncio.get_running_loop()
    outbox: deque[dict[str, Any]] = deque(maxlen=QUEUE_LIMIT)
    observer = Observer(outbox, workspace)
    sender = Sender(outbox, runtime_dir)
    proc = await asyncio.create_subprocess_exec(
        *agent_cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _forward, proc, sig)

    stdin = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stdin), os.fdopen(sys.stdin.fileno(), "rb", 0)
    )
    out_fd = sys.stdout.fileno()
    agent_in = proc.stdin

    async def to_agent(data: bytes) -> None:
        agent_in.write(data)
        await agent_in.drain()

    async def to_editor(data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(out_fd, view)
            except BlockingIOError:
                await asyncio.sleep(0.001)
                continue
            view = view[n:]

    sending = asyncio.create_task(sender.run())
    from_agent = asyncio.create_task(_pump(proc.stdout, to_editor, "agent", observer, sender))

    async def editor_side() -> None:
        await _pump(stdin, to_agent, "client", observer, sender)
        agent_in.close()  # the editor closed our stdin: the agent sees the same EOF

    from_editor = asyncio.create_task(editor_side())
    await from_agent  # the agent closed its stdout: it is exiting
    code = await proc.wait()
    from_editor.cancel()
    if sender.server() is not None:
        with contextlib.suppress(TimeoutError):  # the last records, best effort
            await asyncio.wait_for(_drained(outbox), timeout=2.0)
    sending.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await sending
    return code


async def _drained(outbox: deque[dict[str, Any]]) -> None:
    while outbox:
        await asyncio.sleep(0.05)


def _forward(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)


def main(agent_cmd: list[str], workspace: str | None, runtime_dir: Path | None) -> int:
    if not agent_cmd:
        print("sidemirror acp-tap: give the agent command after --", file=sys.stderr)
        return 2
    # Refuse before the agent starts, where the message can be read: the session would go to
    # whoever made the runtime file. Raises UntrustedRuntimeFile; the CLI prints it.
    from sidemirror.runtime_file import default_runtime_dir

    read_runtime_file(runtime_dir or default_runtime_dir())
    try:
        return asyncio.run(run_tap(agent_cmd, workspace, runtime_dir))
    except FileNotFoundError as exc:
        print(f"sidemirror acp-tap: cannot start {agent_cmd[0]!r}: {exc}", file=sys.stderr)
        return 127
