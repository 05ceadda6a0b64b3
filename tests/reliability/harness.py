"""The real `sidemirror serve` process, and SSE clients that mirror a stream exactly.

Everything is loopback; every wait is bounded by a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from tests.conftest import FIXTURES, ROOT
from tests.ports import free_port

TOKEN = "reliability-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
NDJSON = {**AUTH, "Content-Type": "application/x-ndjson"}
CLAUDE_FIX = FIXTURES / "claude"
LONG_SESSION = CLAUDE_FIX / "sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
MID_SESSION = CLAUDE_FIX / "sample-project" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"


class Server:
    """One data dir, one Claude dir; started, killed (-9) and restarted any number of times."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        same_port: bool = False,
        unprivileged: bool = False,
        fd_limit: int | None = None,
    ) -> None:
        self.tmp = tmp
        self.claude = tmp / "claude"
        self.data = tmp / "data"
        self.claude.mkdir(parents=True, exist_ok=True)
        self.args = args
        self.same_port = same_port
        # Root ignores file modes: `unprivileged` runs the server without the capabilities that
        # let it (permission faults), still as root, so it reaches the checkout wherever it is.
        self.unprivileged = unprivileged
        self.fd_limit = fd_limit  # run under this open-file limit (soft = hard), if given
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0

    def start(self, timeout: float = 20.0) -> None:
        if not self.same_port or not self.port:
            # A new port per start: see test_restart_after_kill_rebinds_the_same_port.
            self.port = free_port()
        self.starts += 1
        out = self.tmp / f"out.{self.starts}.log"
        err = self.tmp / f"err.{self.starts}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEMIRROR")}
        env.update(PYTHONPATH=str(ROOT / "server"), SIDEMIRROR_TOKEN=TOKEN, HOME=str(self.tmp))
        cmd = [
            sys.executable, "-m", "sidemirror", "serve", "--port", str(self.port),
            "--runtime-dir", str(self.tmp / "run"), "--data-dir", str(self.data),
            "--claude-dir", str(self.claude), "--codex-dir", str(self.tmp / "codex"),
            "--log-level", "warning", *self.args,
        ]  # fmt: skip
        if self.fd_limit is not None:
            cmd = ["prlimit", f"--nofile={self.fd_limit}:{self.fd_limit}", "--", *cmd]
        if self.unprivileged and os.geteuid() == 0:
            cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *cmd]
        with out.open("wb") as o, err.open("wb") as e:
            self.proc = subprocess.Popen(cmd, env=env, stdout=o, stderr=e, cwd=self.tmp)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b"listening on" in out.read_bytes():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {err.read_text()}")
            time.sleep(0.02)
        raise TimeoutError(f"server not listening after {timeout}s: {err.read_text()}")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self.kills += 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def rss(self) -> int:
        assert self.proc is not None
        return int(psutil.Process(self.proc.pid).memory_info().rss)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stderr(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.tmp.glob("err.*.log")))

    def get_json(self, path: str, *, auth: bool = True, timeout: float = 10) -> Any:
        req = urllib.request.Request(self.url(path), headers=AUTH if auth else {})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.load(resp)

    def post_json(self, path: str, body: Any, timeout: float = 10) -> Any:
        req = urllib.request.Request(
            self.url(path), data=json.dumps(body).encode(), method="POST",
            headers={**AUTH, "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.load(resp)

    def wait_settled(self, timeout: float = 30.0) -> None:
        """Until the start-up's background work is done: the archive listed and the index file
        opened (searches answer other than 503 only then). A test that fills the disk must not
        race it: the open writes to the disk, and the listing's end frees some of it."""

        def search_open() -> bool:
            try:
                self.get_json("/api/search?q=settled")
            except urllib.error.HTTPError as error:
                return error.code != 503
            return True

        wait_for(search_open, timeout, "the server's start-up work")

    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self.get_json("/health", auth=False)
        return result

    def snapshot(self, ws: str, session: str) -> dict[str, Any]:
        result: dict[str, Any] = self.get_json(
            f"/workspace/{ws}/session?session={session}&limit=10000"
        )
        return result

    def ingest(self, lines: list[dict[str, Any]], ws_dir: str, session: str,
               fmt: str = "events") -> dict[str, Any]:  # fmt: skip
        body = "".join(json.dumps(x) + "\n" for x in lines).encode()
        query = urllib.parse.urlencode({"workspace": ws_dir, "format": fmt, "session": session})
        req = urllib.request.Request(
            self.url(f"/api/ingest?{query}"), data=body, headers=NDJSON, method="POST"
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            result: dict[str, Any] = json.load(resp)
            return result

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


DISCONNECT_ERRORS = ("ClientConnectionResetError", "ConnectionResetError", "BrokenPipeError")


def tracebacks(log_text: str) -> list[str]:
    """The tracebacks in a server log, each as its last line (the exception)."""
    found = []
    lines = log_text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("Traceback"):
            end = n + 1
            while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
                end += 1
            found.append(lines[end] if end < len(lines) else "?")
    return found


def unexpected_tracebacks(log_text: str) -> list[str]:
    """Tracebacks other than a client hanging up mid-write (see test_disconnect_noise)."""
    return [t for t in tracebacks(log_text) if not t.split(":")[0].endswith(DISCONNECT_ERRORS)]


def wait_for(predicate: Any, timeout: float, what: str, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, urllib.error.URLError, KeyError, ValueError) as exc:
            last_exc = exc
        time.sleep(step)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last_exc})")


async def until(predicate: Any, timeout: float, step: float = 0.25) -> bool:
    """Await an async predicate until true or `timeout` (returns whether it became true)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if await predicate():
                return True
        except (OSError, urllib.error.URLError, KeyError, ValueError):
            pass
        await asyncio.sleep(step)
    return False


def canon(item: dict[str, Any]) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def seq_of(item_id: str) -> tuple[str, int]:
    epoch, _, seq = item_id.rpartition(".")
    return epoch, int(seq)


@dataclass
class Mirror:
    """An SSE client holding an exact copy of one session's log, resuming by its last id.

    It counts what a user would notice: items received twice (`duplicates`), a hole in the
    sequence or an item out of order (`gaps`), and protocol resets (`resets`). Ingested logs
    and activity number their items 1, 2, 3… (`dense`), so a hole shows at once; a transcript
    numbers them by byte position, so there a hole shows as an item missing from the final
    comparison with a fresh snapshot (`converged`), and `gaps` counts order breaks.
    """

    server: Server
    path: str  # /workspace/{id}/session/stream?session=...
    name: str = "client"
    dense: bool = False
    items: list[dict[str, Any]] = field(default_factory=list)
    last_id: str | None = None
    duplicates: int = 0
    gaps: int = 0
    resets: int = 0
    connects: int = 0
    frames: int = 0
    latencies: list[float] = field(default_factory=list)
    stalled: bool = False
    error: str | None = None
    reset_log: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        return [i["id"] for i in self.items]

    def _on_frame(self, event: str | None, fid: str | None, data: str) -> None:
        self.frames += 1
        if event in (None, "hello", "session_status", "ping"):
            return
        payload = json.loads(data)
        if event == "reset":
            self.resets += 1
            self.reset_log.append(
                f"{payload.get('reason')} last={self.last_id} now={payload.get('epoch')}"
            )
            return
        if event == "gap":  # activity stream: entries evicted, or an unknown cursor (reset)
            if payload.get("reset"):
                self.resets += 1
                self.items = []
            else:
                self.gaps += int(payload.get("missed", 0))
            return
        if event == "snapshot":
            assert len(payload["items"]) == payload["total"], "snapshot limit too small"
            self.items = list(payload["items"])
            self.last_id = payload["cursor"]
            return
        if fid is None:
            return  # live-only partials (assistant_delta) carry no id
        assert payload["id"] == fid, (payload, fid)
        if fid in self.ids():
            self.duplicates += 1
            return
        if self.items:
            epoch, seq = seq_of(self.items[-1]["id"])
            new_epoch, new_seq = seq_of(fid)
            if new_epoch != epoch or new_seq <= seq or (self.dense and new_seq != seq + 1):
                self.gaps += 1
        elif self.dense and seq_of(fid)[1] != 1:
            self.gaps += 1
        self.items.append(payload)
        self.last_id = fid
        content = payload.get("content")
        if isinstance(content, str) and content.startswith("load "):
            self.latencies.append(time.time() - float(content.rsplit(" ", 1)[1]))

    async def run(self, stop: asyncio.Event, *, reconnect_delay: float = 0.1) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=2, sock_read=None)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while not stop.is_set():
                headers = dict(AUTH)
                if self.last_id:
                    headers["Last-Event-ID"] = self.last_id
                try:
                    async with http.get(self.server.url(self.path), headers=headers) as resp:
                        if resp.status != 200:
                            raise aiohttp.ClientError(f"status {resp.status}")
                        self.connects += 1
                        await self._read(resp, stop)
                except (TimeoutError, aiohttp.ClientError, OSError):
                    pass
                if not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), reconnect_delay)

    async def _read(self, resp: aiohttp.ClientResponse, stop: asyncio.Event) -> None:
        buf = b""
        while not stop.is_set():
            if self.stalled:
                await asyncio.sleep(0.05)
                continue
            read = asyncio.ensure_future(resp.content.readany())
            stopper = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({read, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            if read not in done:
                read.cancel()
                return
            chunk = read.result()
            if not chunk:
                return
            buf += chunk
            while b"\n\n" in buf:
                raw, buf = buf.split(b"\n\n", 1)
                event = fid = None
                data: list[str] = []
                for line in raw.decode("utf-8").split("\n"):
                    key, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if key == "event":
                        event = value
                    elif key == "id":
                        fid = value
                    elif key == "data":
                        data.append(value)
                if data:
                    self._on_frame(event, fid, "\n".join(data))


def check_mirrors(mirrors: list[Mirror], fresh: list[dict[str, Any]]) -> dict[str, int]:
    """Every mirror holds exactly the fresh snapshot: returns loss/duplicate/gap totals."""
    want = [canon(i) for i in fresh]
    lost = dup = gaps = 0
    for m in mirrors:
        got = [canon(i) for i in m.items]
        lost += len(set(want) - set(got))
        dup += m.duplicates + (len(got) - len(set(got)))
        gaps += m.gaps
    return {"lost": lost, "duplicates": dup, "gaps": gaps}


def mirrors_converged(mirrors: list[Mirror], fresh: list[dict[str, Any]]) -> bool:
    want = [canon(i) for i in fresh]
    return all([canon(i) for i in m.items] == want for m in mirrors)


def claude_project(server: Server, name: str = "-path-to-Demo") -> Path:
    project = server.claude / name
    project.mkdir(parents=True, exist_ok=True)
    return project


def fixture_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


__all__ = ["CLAUDE_FIX", "LONG_SESSION", "MID_SESSION", "Mirror", "Server", "wait_for"]


async def start_load_clients(
    server: Server, path: str, clients: int, ready_within: float = 60
) -> asyncio.subprocess.Process:
    """`clients` SSE readers of `path` in a process of their own (load_clients.py), started and
    subscribed; tell it `TOTAL n` on stdin and it prints a JSON summary once all have n items."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.reliability.load_clients", str(server.port), path,
        str(clients), cwd=ROOT, env={**os.environ, "SIDEMIRROR_TOKEN": TOKEN,
        "PYTHONPATH": f"{ROOT}:{ROOT / 'server'}"},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    ready = await asyncio.wait_for(proc.stdout.readline(), ready_within)
    assert ready.strip() == b"READY", ready
    return proc
