"""How to start each tool (ours and the peers) against a temporary HOME, and how to watch it.

Each tool runs from its own venv under `.bench/` (made by scripts/bench). Facts read from the
peers' installed source (versions pinned in scripts/bench):

- vibedeck 0.3.0 (`vibedeck serve`, FastAPI + uvicorn): watches `~/.claude/projects` with
  `watchfiles.awatch` (default debounce 1600 ms / step 50 ms) and pushes each new transcript
  entry, rendered as HTML, to every client of the SSE endpoint `GET /events` (event `message`).
  The stream starts with `sessions` then `catchup_complete`.
- claude-code-log 1.7.0 (`claude-code-log serve --watch`): converts the projects folder to static
  HTML (`<project>/session-<id>.html`), re-converts on change (a polling `WatchEngine`, 0.25 s
  polls plus a debounce), and its live page (`live_update.js`) polls the page every 1000 ms
  (HEAD, then GET when it changed). We GET the page at the same 1000 ms cadence.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

BENCH = Path(__file__).resolve().parent.parent / ".bench"
TOKEN = "bench-token-0123456789abcdef0123456789abcdef"
OURS_PYTHONPATH = "BENCH_OURS_PYTHONPATH"  # e.g. a copy of server/ at another revision


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    name: str
    proc: subprocess.Popen[bytes]
    port: int
    home: Path
    log: Path
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra or {})
    return env


def _spawn(name: str, argv: list[str], home: Path, env_extra: dict[str, str] | None = None):
    log = home.parent / f"{name}.log"
    fh = log.open("wb")
    proc = subprocess.Popen(
        argv,
        env=_env(home, env_extra),
        stdout=fh,
        stderr=subprocess.STDOUT,
        cwd=str(home),
        start_new_session=True,
    )
    return proc, log


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


async def wait_http(
    url: str, proc: subprocess.Popen[bytes], timeout: float, headers: dict[str, str] | None = None
) -> float:
    """Poll `url` every 20 ms until it answers 200 (for our `/health`: and no longer says the
    server is starting); returns the time it took."""
    t0 = time.monotonic()
    async with aiohttp.ClientSession() as s:
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                raise RuntimeError(f"exited with status {proc.returncode}")
            try:
                async with s.get(url, headers=headers or {}) as r:
                    if r.status == 200 and not await _starting(r):
                        return time.monotonic() - t0
            except (aiohttp.ClientError, OSError):
                pass
            await asyncio.sleep(0.02)
    raise RuntimeError(f"no answer from {url} in {timeout:.0f} s")


async def _starting(response: aiohttp.ClientResponse) -> bool:
    """Whether this is our server's `/health` while it starts (it serves nothing else yet)."""
    if response.content_type != "application/json":
        return False
    body = await response.json()
    return isinstance(body, dict) and body.get("status") == "starting"


def tail_log(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


# --- ours ---


def ours_argv(home: Path, port: int) -> list[str]:
    return [
        str(BENCH / "venv/bin/python"),
        "-m",
        "sidemirror",
        "serve",
        "--port",
        str(port),
        "--runtime-dir",
        str(home.parent / "sm-runtime"),
        "--data-dir",
        str(home.parent / "sm-data"),
        "--claude-dir",
        str(home / ".claude/projects"),
        "--log-level",
        "warning",
    ]


@contextlib.contextmanager
def _serving(
    name: str,
    home: Path,
    argv: Callable[[int], list[str]],
    env_extra: dict[str, str] | None = None,
) -> Iterator[Running]:
    """`argv(port)` running as `name` on a free port against `home` (its output in a log beside
    it), stopped when the block ends."""
    port = free_port()
    proc, log = _spawn(name, argv(port), home, env_extra)
    try:
        yield Running(name, proc, port, home, log)
    finally:
        stop(proc)


def start_ours(home: Path) -> AbstractContextManager[Running]:
    env = {"SIDEMIRROR_TOKEN": TOKEN}
    if os.environ.get(OURS_PYTHONPATH):  # A/B runs: another copy of server/ (same venv)
        env["PYTHONPATH"] = os.environ[OURS_PYTHONPATH]
    return _serving("sidemirror", home, lambda port: ours_argv(home, port), env)


AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def ours_stream_url(run: Running, session_id: str) -> str:
    async with (
        aiohttp.ClientSession() as s,
        s.get(run.base + "/api/workspaces", headers=AUTH) as r,
    ):
        data = await r.json()
    ws = data["workspaces"][0]["id"]
    return f"{run.base}/workspace/{ws}/session/stream?session={session_id}"


# --- vibedeck ---


def _peer_serve(name: str, port: int, *options: str) -> list[str]:
    """A peer's `serve` command (both peers spell it the same way) on `port`."""
    return [str(PEER_DIRS[name]), "serve", "--port", str(port), *options]


def start_vibedeck(home: Path) -> AbstractContextManager[Running]:
    options = (
        "--host",
        "127.0.0.1",
        "--no-open",
        "--disable-auto-summarization",
        "--disable-terminal",
        "--disable-send",
        "--disable-idle-summarization",
        "--disable-long-running-summarization",
    )
    return _serving("vibedeck", home, lambda port: _peer_serve("vibedeck", port, *options))


# --- claude-code-log ---


def start_claude_code_log(home: Path) -> AbstractContextManager[Running]:
    options = ("--projects-dir", str(home / ".claude/projects"), "--watch", "--no-index")
    return _serving(
        "claude-code-log", home, lambda port: _peer_serve("claude-code-log", port, *options)
    )


def ccl_page_url(run: Running, session_id: str) -> str | None:
    projects = run.home / ".claude/projects"
    for page in projects.rglob(f"session-{session_id}*.html"):
        return f"{run.base}/{page.relative_to(projects).as_posix()}"
    return None


PEER_DIRS = {
    "vibedeck": BENCH / "peers/vibedeck/bin/vibedeck",
    "claude-code-log": BENCH / "peers/claude-code-log/bin/claude-code-log",
}
