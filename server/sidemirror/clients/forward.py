"""`sidemirror forward`: send this machine's agent files to a Sidemirror server elsewhere.

Runs where the agent runs (a remote box, a container, a CI runner) and needs no browser: it
watches the agent folders with the server's own watcher, and sends each file's new complete
lines with their byte offset over `GET /api/forward/ws` (see web/forward.py), on the server's
forward socket (web/forward_listener.py) as relayed to this machine, e.g. by `ssh -R`.

The server keeps a byte-exact mirror and acknowledges each frame with the mirror's size; one
frame is in flight at a time, so after any disconnect, or a kill of either side, the forwarder
resumes from the server's sizes: nothing lost, nothing sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from sidemirror.clients.retry import Backoff
from sidemirror.core.private import untrusted
from sidemirror.sources.files.watch import watch_paths

logger = logging.getLogger(__name__)

CHUNK = 4 << 20  # bytes per frame (the server takes up to 8 MiB)
RETRY_FIRST_S = 0.1
RETRY_MAX_S = 5.0  # a restarted server is found within this much of being back
ACK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Root:
    """An agent folder and the name its files have on the server (`claude/…`, `codex/…`)."""

    kind: str
    dir: Path
    watch: Path  # the part of `dir` that holds transcripts

    def key(self, path: Path) -> str:
        return f"{self.kind}/{path.relative_to(self.dir).as_posix()}"


@dataclass
class _Link:
    ws: aiohttp.ClientWebSocketResponse
    offsets: dict[str, int] = field(default_factory=dict)


class ForwardError(Exception):
    """The server refused us (bad token, bad label): retrying would not help."""


def claude_root(projects: Path) -> Root:
    return Root("claude", projects, projects)


def codex_root(codex_home: Path) -> Root:
    return Root("codex", codex_home, codex_home / "sessions")


def default_label() -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname())[:64].strip("-._")
    return name or "remote"


def read_token_file(path: Path) -> str:
    """A token from a file only this user can read: never from the command line, where every
    user of the machine sees it in `ps`."""
    reason = untrusted(path, folder=False)
    if reason is not None:
        raise ForwardError(f"refusing token file {path}: {reason}")
    if path.stat().st_mode & 0o077:
        raise ForwardError(f"token file {path} is readable by others: chmod 600 {path}")
    token = path.read_text().strip()
    if not token:
        raise ForwardError(f"token file {path} is empty")
    return token


TOKEN_ENV = "SIDEMIRROR_FORWARD_TOKEN"
UNIX = "unix:"
# The host part of the URL asked for on the socket: a Unix socket has no host to name.
WS_URL = "http://localhost/api/forward/ws"


def socket_of(to: str) -> Path:
    """`unix:PATH` → PATH: the forward socket, as relayed to this machine."""
    if not to.startswith(UNIX) or not to[len(UNIX) :]:
        raise ForwardError(
            f"--to {to!r}: give the forward socket as unix:PATH (see docs/remote.md)"
        )
    return Path(to[len(UNIX) :]).expanduser()


class Forwarder:
    def __init__(
        self,
        socket_path: Path,
        token: str,
        label: str,
        roots: list[Root],
        chunk: int = CHUNK,
        token_source: Callable[[], str] | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.chunk = chunk
        self.token = token
        self.token_source = token_source  # read again when the server refuses the token
        self.backoff = Backoff(RETRY_FIRST_S, RETRY_MAX_S)
        self.label = label
        self.roots = roots
        self._dirty: set[Path] = set()
        self._woken = asyncio.Event()
        self.sent_bytes = 0

    def _root_of(self, path: Path) -> Root | None:
        return next((r for r in self.roots if path.is_relative_to(r.watch)), None)

    def _all_files(self) -> set[Path]:
        found: set[Path] = set()
        for root in self.roots:
            if root.watch.is_dir():
                found.update(p for p in root.watch.rglob("*.jsonl") if p.is_file())
        return found

    def _mark(self, paths: set[Path]) -> None:
        self._dirty |= paths
        self._woken.set()

    async def run(self, stop: asyncio.Event) -> None:
        async with watch_paths(
            [r.watch for r in self.roots],
            accept=lambda p: p.suffix == ".jsonl",
            stop_event=stop,
        ) as batches:
            watcher = asyncio.create_task(self._collect(batches))
            try:
                await self._send_forever(stop)
            finally:
                watcher.cancel()

    async def _collect(self, batches: Any) -> None:
        async for batch in batches:
            self._mark({path for _change, path in batch})

    async def _send_forever(self, stop: asyncio.Event) -> None:
        """Connect and send, and after any loss connect again, until `stop`. A server that
        restarts, is still starting (503) or was handed a new token (401: the token is read
        again) is waited for, saying why each time; only a refusal retrying cannot fix ends it."""
        while not stop.is_set():
            try:
                await self._connected(stop)
            except aiohttp.WSServerHandshakeError as exc:
                if exc.status == 403:  # another OS user, or a browser: never ours to fix
                    raise ForwardError(
                        f"the server refused this connection (403: {exc.message})"
                    ) from None
                why = _refusal(exc.status, self.token_source is not None)
                if exc.status == 401:
                    self.token = self._reload_token()
            except (OSError, aiohttp.ClientError, ConnectionError, TimeoutError) as exc:
                why = f"connection lost ({str(exc) or type(exc).__name__})"
            if stop.is_set():
                return
            delay = self.backoff.wait()
            logger.warning("forward: %s; retrying in %.1fs", why, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)

    def _reload_token(self) -> str:
        """The token again, from where it came (a file the user may have updated)."""
        if self.token_source is None:
            return self.token
        try:
            return self.token_source()
        except (ForwardError, OSError) as exc:
            logger.warning("forward: cannot read the token again: %s", exc)
            return self.token

    async def _connected(self, stop: asyncio.Event) -> None:
        connector = aiohttp.UnixConnector(path=str(self.socket_path))
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.ws_connect(
                WS_URL,
                headers={"Authorization": f"Bearer {self.token}"},
                max_msg_size=0,  # no limit: acks are small, and the server bounds its own
                # Deflating MiB frames in Python cost 90 % of the forwarder's time and capped it
                # at ~5 MB/s; SSH compresses the link if asked to (`ssh -C`).
                compress=0,
                heartbeat=30,
            ) as ws,
        ):
            link = await self._hello(ws)
            self.backoff.reset()  # the link works: a drop is retried quickly again
            # Everything again: the server's offsets say what it already has.
            self._mark(await asyncio.to_thread(self._all_files))
            await self._drain(link, stop)

    async def _hello(self, ws: aiohttp.ClientWebSocketResponse) -> _Link:
        await ws.send_str(json.dumps({"type": "hello", "label": self.label, "version": 1}))
        answer = await _receive(ws)
        if answer.get("type") != "welcome":
            raise ForwardError(f"the server refused the hello: {answer.get('error', answer)}")
        return _Link(ws, {str(k): int(v) for k, v in answer["offsets"].items()})

    async def _drain(self, link: _Link, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not self._dirty:
                self._woken.clear()
                waiter = asyncio.create_task(self._woken.wait())
                stopper = asyncio.create_task(stop.wait())
                await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                stopper.cancel()
                continue
            path = self._dirty.pop()
            try:
                await self._sync(link, path)
            except BaseException:
                self._dirty.add(path)  # not fully sent: again after the reconnect
                raise

    async def _sync(self, link: _Link, path: Path) -> None:
        root = self._root_of(path)
        if root is None:
            return
        key = root.key(path)
        try:
            size = path.stat().st_size
        except OSError:
            return  # gone: the mirror keeps what it had
        acked = link.offsets.get(key, 0)
        if size < acked:  # truncated or replaced by a shorter file: start it over
            acked = await self._frame(link, key, {"truncate": 0}, b"")
        # Whole lines only: a line still being written is sent once it ends.
        complete = await asyncio.to_thread(_lines_end, path, acked, size)
        while acked < complete:
            chunk = await asyncio.to_thread(_read, path, acked, min(self.chunk, complete - acked))
            if not chunk:
                return  # shrank meanwhile: the next change says how
            last = acked + len(chunk) == complete
            end = len(chunk) if last else chunk.rfind(b"\n") + 1 or len(chunk)
            # `more`: the rest of this backlog follows at once, so the server may hold it back
            # from its readers until the last frame (web/forward.py).
            header = {"offset": acked, "more": acked + end < complete}
            acked = await self._frame(link, key, header, chunk[:end])
            self.sent_bytes += end

    async def _frame(self, link: _Link, key: str, header: dict[str, Any], data: bytes) -> int:
        head = json.dumps({"file": key, **header}).encode()
        await link.ws.send_bytes(head + b"\n" + data)
        answer = await _receive(link.ws)
        if answer.get("type") != "ack" or answer.get("file") != key:
            raise ForwardError(f"the server refused {key}: {answer.get('error', answer)}")
        size = int(answer["size"])
        link.offsets[key] = size
        return size


def _refusal(status: int, from_file: bool) -> str:
    """Why the server's answer to the handshake is worth retrying, for the user."""
    if status == 401:
        fix = (
            "put the server's in the token file (read again before each try)"
            if from_file
            else f"set ${TOKEN_ENV} to the server's and start again"
        )
        return (
            f"the server refused the forward token (401): {fix}; "
            "`sidemirror token --forward` prints it"
        )
    if status == 503:
        return "the server is starting or stopping (503)"
    return f"the server answered {status}"


async def _receive(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    """The server's next JSON message; a closed link raises ConnectionError (retried)."""
    msg = await ws.receive(ACK_TIMEOUT_S)
    if msg.type is not aiohttp.WSMsgType.TEXT:
        raise ConnectionError(f"the server closed the link ({msg.type.name}, {msg.extra or ''})")
    answer: Any = json.loads(msg.data)
    if not isinstance(answer, dict):
        raise ForwardError(f"the server answered {answer!r}")
    return answer


def _lines_end(path: Path, start: int, size: int) -> int:
    """Where the last complete line of `path[start:size]` ends (`start` if none has)."""
    with path.open("rb") as f:
        pos = size
        while pos > start:
            step = max(start, pos - (64 << 10))
            f.seek(step)
            block = f.read(pos - step)
            newline = block.rfind(b"\n")
            if newline >= 0:
                return step + newline + 1
            pos = step
    return start


def _read(path: Path, offset: int, length: int) -> bytes:
    with path.open("rb") as f:
        f.seek(offset)
        return f.read(length)


def run_forward(forwarder: Forwarder) -> int:
    roots = ", ".join(str(r.watch) for r in forwarder.roots)
    print(
        f"sidemirror forward: sending {roots} to unix:{forwarder.socket_path} "
        f"as {forwarder.label!r}",
        file=sys.stderr,
    )

    async def main() -> None:
        await forwarder.run(asyncio.Event())

    try:
        asyncio.run(main())
    except ForwardError as exc:
        print(f"sidemirror forward: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


def token_from(token_file: Path | None) -> str:
    if token_file is not None:
        return read_token_file(token_file)
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ForwardError(
            f"no forward token: give --token-file FILE (mode 600) or set {TOKEN_ENV} "
            "(`sidemirror token --forward` prints it on the server's machine)"
        )
    return token


def run_from_args(args: Any, claude_dirs: list[Path], codex_dir: Path | None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    roots = [claude_root(d.expanduser()) for d in claude_dirs]
    if codex_dir is not None:
        roots.append(codex_root(codex_dir.expanduser()))
    try:
        socket_path = socket_of(args.to)
        token = token_from(args.token_file)
    except (ForwardError, OSError) as exc:
        print(f"sidemirror forward: {exc}", file=sys.stderr)
        return 2
    if not 1 <= args.frame_kib <= CHUNK >> 10:
        print(f"sidemirror forward: --frame-kib must be 1 to {CHUNK >> 10}", file=sys.stderr)
        return 2
    token_file = args.token_file
    reload = None if token_file is None else lambda: read_token_file(token_file)
    chunk = args.frame_kib << 10
    return run_forward(Forwarder(socket_path, token, args.label, roots, chunk, reload))
