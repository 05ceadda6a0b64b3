"""The one launcher of a real `sidemirror serve` process, for every test that needs one.

A `Server` owns a folder (`tmp`): its data, runtime, Claude and Codex dirs default to folders
there, and `HOME` points there, so a test never reads or writes a user's files, and never
meets a user's server (its port is one the test chose, or the server chose in the range).
Each start appends the process's stdout and stderr to `out.N.log` / `err.N.log` in that folder
(N counts the starts), so a test can read the log after a crash, and check it for tracebacks.
It can be started, killed (-9) and restarted any number of times with the same dirs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any, Literal

import psutil

from tests.harness.auth import TOKEN
from tests.harness.cli import clean_env
from tests.harness.ports import free_port
from tests.harness.waiting import wait_until


@dataclass(frozen=True)
class Reply:
    """One HTTP answer as it came, an error status included (`Server.exchange`)."""

    status: int
    headers: Message
    body: bytes

    def text(self) -> str:
        return self.body.decode(errors="replace")

    def json_or_text(self) -> Any:
        """The JSON body; the text where it is not JSON (a proxy's or aiohttp's own page)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return self.text()


LISTENING = re.compile(rb"listening on http://[^\s:]+:(\d+)")


class ServerExited(RuntimeError):
    """The server process ended while starting (e.g. its port was taken meanwhile)."""


class Server:
    """`python -m sidemirror serve ARGS` with its own dirs; see the module's docstring.

    `port`: a fixed port; None, a fresh free one each start (the first one again on every
    restart with `same_port`); "default", no `--port` (the server picks in its range).
    `ready`: what `start` waits for: the "listening on" line (the port is bound, the server may
    still be loading), or "ok": `/health` of this very server says ok (every route answers).
    `data_dir`, `runtime_dir`: "default" passes none (the server's default under HOME).
    `token`: given as SIDEMIRROR_TOKEN (None: the server makes its own); `log_level`: None
    keeps the server's default; `access_log` turns the server's access log on (off by default;
    `requests()` reads it). `unprivileged` runs it without the
    capabilities that let root ignore file modes; `fd_limit`, under that open-file limit.
    """

    def __init__(
        self,
        tmp: Path,
        *args: str,
        port: int | Literal["default"] | None = None,
        same_port: bool = False,
        claude_dir: Path | None = None,
        data_dir: Path | Literal["default"] | None = None,
        runtime_dir: Path | Literal["default"] | None = None,
        codex_dir: Path | None = None,
        token: str | None = TOKEN,
        env: Mapping[str, str] | None = None,
        log_level: str | None = "warning",
        access_log: bool = False,
        ready: Literal["listening", "ok"] = "listening",
        unprivileged: bool = False,
        fd_limit: int | None = None,
        python_args: Sequence[str] = ("-m", "sidemirror"),
    ) -> None:
        self.tmp = tmp
        self.args = args
        # "default": no --data-dir, the server's own default under HOME (XDG_DATA_HOME unset).
        self.default_data = data_dir == "default"
        self.data = (
            tmp / ".local/share/sidemirror" if data_dir == "default" else data_dir or tmp / "data"
        )
        self.claude = claude_dir or tmp / "claude"
        self.claude.mkdir(parents=True, exist_ok=True)
        # "default": the server's own choice, in HOME's cache dir (XDG_RUNTIME_DIR unset).
        self.default_runtime = runtime_dir == "default"
        self.runtime_dir = (
            tmp / ".cache/sidemirror/run"
            if runtime_dir == "default"
            else runtime_dir or tmp / "run"
        )
        self.codex = codex_dir or tmp / "codex"
        self.token, self.env = token, dict(env or {})
        self.log_level, self.ready, self.access_log = log_level, ready, access_log
        self.fixed_port, self.same_port = port, same_port
        self.unprivileged, self.fd_limit = unprivileged, fd_limit
        self.python_args = tuple(python_args)
        self.port = port if isinstance(port, int) else 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0
        # Set once `ready="ok"` saw this server's /health: who answers on the port.
        self.instance: str | None = None
        self.server_id: str | None = None

    def command(self) -> list[str]:
        port = [] if self.fixed_port == "default" else ["--port", str(self.port)]
        level = [] if self.log_level is None else ["--log-level", self.log_level]
        level += ["--access-log"] if self.access_log else []
        data = [] if self.default_data else ["--data-dir", str(self.data)]
        run = [] if self.default_runtime else ["--runtime-dir", str(self.runtime_dir)]
        cmd = [
            sys.executable, *self.python_args, "serve", *port,
            *run, *data,
            "--claude-dir", str(self.claude), "--codex-dir", str(self.codex),
            *level, *self.args,
        ]  # fmt: skip
        if self.fd_limit is not None:
            cmd = ["prlimit", f"--nofile={self.fd_limit}:{self.fd_limit}", "--", *cmd]
        if self.unprivileged and os.geteuid() == 0:
            cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *cmd]
        return cmd

    def environment(self) -> dict[str, str]:
        token = {} if self.token is None else {"SIDEMIRROR_TOKEN": self.token}
        return clean_env(self.tmp, **token, **self.env)

    def start(self, timeout: float = 90.0) -> Server:
        """Start the process and wait until it is ready (see `ready`). The timeout is a bound,
        not a wait: on a loaded 2-core machine the interpreter alone can take 20 s to import
        everything and listen."""
        if self.fixed_port is None and not (self.same_port and self.port):
            self.port = free_port()  # a new port per start: see test_restart_hygiene.py
        self.starts += 1
        out, err = self.out_log(self.starts), self.tmp / f"err.{self.starts}.log"
        self.tmp.mkdir(parents=True, exist_ok=True)
        # Appended, not truncated: a second Server on the same folder adds to the same files.
        out_from = out.stat().st_size if out.exists() else 0
        with out.open("ab") as o, err.open("ab") as e:
            self.proc = subprocess.Popen(
                self.command(), env=self.environment(), stdout=o, stderr=e, cwd=self.tmp
            )
        self._wait_ready(out, out_from, timeout)
        return self

    def refused(self, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """The same command run to its end, for a start the server must refuse: its exit code,
        stdout and stderr (text). Nothing is left running."""
        return subprocess.run(
            self.command(), env=self.environment(), capture_output=True, text=True, timeout=timeout
        )

    def _wait_ready(self, out: Path, out_from: int, timeout: float) -> None:
        proc = self.proc
        assert proc is not None

        def listening() -> bool:
            if proc.poll() is not None:
                raise ServerExited(f"server exited {proc.returncode}: {self.stderr()[-3000:]}")
            with out.open("rb") as fh:
                fh.seek(out_from)
                found = LISTENING.search(fh.read())
            if found:
                self.port = int(found.group(1))
            return found is not None

        wait_until(listening, timeout, "the server to listen", step=0.02)
        if self.ready == "ok":
            wait_until(self._serves_everything, timeout, "the server's /health to say ok")

    def _serves_everything(self) -> bool:
        # While it starts, /health says "starting" and nothing else answers. Only the server
        # that uses this data dir counts (its server_id), not one that took the port after it.
        health = self.health()
        ours = health.get("server_id") and health["server_id"] == self.own_server_id()
        if ours and health.get("status") == "ok":
            self.instance, self.server_id = health["instance"], health["server_id"]
            return True
        return False

    def stop(self) -> int | None:
        """SIGTERM (the server's clean shutdown), SIGKILL if it does not end: its exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown handlers run, connections are cut, files stay."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
            self.kills += 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss(self) -> int:
        assert self.proc is not None
        return int(psutil.Process(self.proc.pid).memory_info().rss)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # What the server wrote.

    def out_log(self, start: int) -> Path:
        return self.tmp / f"out.{start}.log"

    def stdout(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.tmp.glob("out.*.log")))

    def stderr(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.tmp.glob("err.*.log")))

    def requests(self) -> list[str]:
        """`METHOD /path` of every request this server logged (its access log has no query
        string and no header, by design; `log_level=None` keeps it)."""
        return re.findall(r"aiohttp\.access: (\S+ \S+) \d+", self.stderr())

    def panel_credential(self) -> str:
        """What only the paired extension gets (the server keeps it in its data dir)."""
        return (self.data / "panel_credential").read_text().strip()

    def own_server_id(self) -> str | None:
        try:
            return (self.data / "server_id").read_text().strip() or None
        except OSError:
            return None

    # Its HTTP API, as a client with the token.

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        auth: bool = True,
        content_type: str | None = None,
        timeout: float = 10,
    ) -> Any:
        """The JSON answer; an error status raises urllib's HTTPError."""
        headers = {"Authorization": f"Bearer {self.token}"} if auth and self.token else {}
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.url(path), data=body, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return json.loads(res.read())

    def exchange(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30,
        most: int = -1,
    ) -> Reply:
        """A request with exactly `headers` (none added), for tests of refusals and limits: the
        answer whatever its status, its body whole or its first `most` bytes."""
        req = urllib.request.Request(self.url(path), body, dict(headers or {}), method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                return Reply(res.status, res.headers, res.read(most))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, exc.headers, exc.read(most))

    def get(self, path: str, *, auth: bool = True, timeout: float = 10) -> Any:
        return self.request("GET", path, auth=auth, timeout=timeout)

    def post_json(self, path: str, body: Any, timeout: float = 10) -> Any:
        data = json.dumps(body).encode()
        return self.request("POST", path, data, content_type="application/json", timeout=timeout)

    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self.get("/health", auth=False)
        return result

    def ingest(
        self, workspace: str, session: str, events: list[dict[str, Any]], fmt: str = "events"
    ) -> dict[str, Any]:
        body = "".join(json.dumps(e) + "\n" for e in events).encode()
        q = urllib.parse.urlencode({"workspace": workspace, "format": fmt, "session": session})
        result: dict[str, Any] = self.request(
            "POST", f"/api/ingest?{q}", body, content_type="application/x-ndjson"
        )
        return result

    def workspaces(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.get("/api/workspaces")["workspaces"]
        return result

    def snapshot(self, ws: str, session: str, limit: int = 10000) -> dict[str, Any]:
        result: dict[str, Any] = self.get(
            f"/workspace/{ws}/session?session={session}&limit={limit}"
        )
        return result

    def wait_settled(self, timeout: float = 30.0) -> None:
        """Until the start-up's background work is done: the archive listed and the index file
        opened (searches answer other than 503 only then). A test that fills the disk must not
        race it: the open writes to the disk, and the listing's end frees some of it."""

        def search_open() -> bool:
            try:
                self.get("/api/search?q=settled")
            except urllib.error.HTTPError as error:
                return error.code != 503
            return True

        wait_until(search_open, timeout, "the server's start-up work")
