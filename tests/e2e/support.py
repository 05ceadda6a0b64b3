"""E2E support: a real `sidemirror serve` subprocess and Debian Chromium with the extension loaded.

No mocks: the extension finds, pairs with and streams from the real server over 127.0.0.1.

A test run never pairs with a server it did not start. A fresh extension contacts no server
until a page opens, so `start_extension` pins it, before that, to a port where nothing can
answer (`parked_port`): a pinned port is the only port the extension probes. Each test then
points it at its own server (`Extension.use_port`), or deliberately unpins it to test discovery.
conftest.py runs a decoy Sidemirror server on the range for the whole session to prove it.
"""

from __future__ import annotations

import http.server
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, Playwright, Worker
from sidemirror.native_host.manifest import install_host

ROOT = Path(__file__).resolve().parents[2]
EXT_DIR = ROOT / "extension"
EXT_ID = "mboojbmhcigehknaafejhibpmmdjpgbn"
CHROMIUM = os.environ.get("SIDEMIRROR_CHROMIUM", "/usr/bin/chromium")
FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE_SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
PORT_RANGE = range(47470, 47480)
TOKEN = "e2e-token-" + "7f3a9c1d5b2e4f60"  # given to the server via SIDEMIRROR_TOKEN
AXE_JS = Path(__file__).parents[2] / "node_modules" / "axe-core" / "axe.min.js"
PANEL_SIZE = {"width": 420, "height": 820}
# In the User-Agent of every request the browser under test makes, so the decoy can tell its
# requests from those of other processes on this machine that probe the range too.
BROWSER_MARK = f"SidemirrorE2E/{os.getpid()}"
USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    f"Chrome/{os.environ.get('SIDEMIRROR_UA_CHROME', '156.0.0.0')} Safari/537.36 {BROWSER_MARK}"
)

_parked: socket.socket | None = None


def parked_port() -> int:
    """A loopback port bound for the whole run but never listening: connecting is refused, so no
    server of anyone's can answer there."""
    global _parked
    if _parked is None:
        _parked = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        _parked.bind(("127.0.0.1", 0))
    port: int = _parked.getsockname()[1]
    return port


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # Bind like the server does (SO_REUSEADDR): TIME_WAIT leftovers don't block a port.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


# Below the kernel's ephemeral ports (32768-60999: outgoing connections and port 0 take those).
QUIET_PORTS = range(20000, 32768)


def quiet_port(avoid: set[int] | None = None) -> int:
    """A free port no one else picks: not in the probe range, so no discovery (ours, or that of
    another checkout's tests running at the same time) looks there, and a server the extension
    is pinned to meets no one else. Chosen at random, so that a server a test stops for a moment
    finds its port free again when it restarts: ports taken in order (these once were, lowest
    first, by every checkout's tests) made the port of a stopped server the very next one
    another test took, and the restart failed with "address already in use"."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.choice(QUIET_PORTS)
        if port not in (avoid or set()) and port_free(port):
            return port
    raise RuntimeError(f"no free port found in {QUIET_PORTS.start}-{QUIET_PORTS.stop - 1}")


def free_port(prefer: list[int] | None = None, avoid: set[int] | None = None) -> int:
    """A free port in the extension's probe range, trying `prefer` first, then from the top,
    never one of `avoid`."""
    for port in [*(prefer or []), *reversed(PORT_RANGE)]:
        if port not in (avoid or set()) and port_free(port):
            return port
    raise RuntimeError("no free port in 47470-47479")


class ServerExited(RuntimeError):
    """The server process ended while starting (typically: its port was taken meanwhile)."""


class Server:
    """`python -m sidemirror serve` on a fixed port, restartable with the same dirs."""

    def __init__(
        self,
        tmp: Path,
        port: int,
        claude_dir: Path,
        extra_args: tuple[str, ...] = (),
        runtime_dir: Path | None = None,
    ) -> None:
        self.tmp = tmp
        # Where the browser's pairing host looks (`install_pairing_host`): one per test.
        self.runtime_dir = runtime_dir or tmp / "runtime"
        self.extra_args = extra_args  # more `serve` flags (e.g. --demo)
        self.port = port
        self.claude_dir = claude_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = tmp / f"server-{port}.log"
        self.instance: str | None = None
        self.server_id: str | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT / "server") + os.pathsep + env.get("PYTHONPATH", "")
        env["SIDEMIRROR_TOKEN"] = TOKEN
        cmd = [
            sys.executable, "-m", "sidemirror", "serve",
            "--port", str(self.port),
            "--runtime-dir", str(self.runtime_dir),
            "--data-dir", str(self.tmp / "data"),
            "--claude-dir", str(self.claude_dir),
            "--codex-dir", str(self.tmp / "no-codex"),
            "--access-log",  # requests() reads it
            *self.extra_args,
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        # A bound, not a wait: on a loaded 2-core machine the interpreter alone can take 20 s to
        # import everything and listen.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerExited(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                health = self.get("/health", auth=False)
            except (OSError, urllib.error.URLError):
                time.sleep(0.1)
                continue
            # Another process (another checkout's tests) may have taken the port after it was
            # found free: only the server that uses this data dir counts as started, once it
            # serves every route (while it starts, /health says "starting" and nothing else answers).
            ours = health.get("server_id") and health["server_id"] == self.own_server_id()
            if ours and health.get("status") == "ok":
                self.instance, self.server_id = health["instance"], health["server_id"]
                return self
            time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log.read_text()[-2000:]}")

    def panel_credential(self) -> str:
        """What only the paired extension gets (the server keeps it in its data dir)."""
        return (self.tmp / "data" / "panel_credential").read_text().strip()

    def own_server_id(self) -> str | None:
        try:
            return (self.tmp / "data" / "server_id").read_text().strip() or None
        except OSError:
            return None

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def requests(self) -> list[str]:
        """`METHOD /path` of every request this server logged (its access log has no query
        string and no header, by design)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return re.findall(r"aiohttp\.access: (\S+ \S+) \d+", text)

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown handlers run, connections are cut, files stay."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def request(self, method: str, path: str, body: bytes | None = None, *, auth: bool = True,
                content_type: str | None = None) -> Any:  # fmt: skip
        headers = {"Authorization": f"Bearer {TOKEN}"} if auth else {}
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.base + path, data=body, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read())

    def get(self, path: str, *, auth: bool = True) -> Any:
        return self.request("GET", path, auth=auth)

    def ingest(self, workspace: str, session: str, events: list[dict[str, Any]]) -> Any:
        body = "".join(json.dumps(e) + "\n" for e in events).encode()
        q = urllib.parse.urlencode({"workspace": workspace, "format": "events", "session": session})
        return self.request("POST", f"/api/ingest?{q}", body, content_type="application/x-ndjson")

    def workspaces(self) -> list[dict[str, Any]]:
        return self.get("/api/workspaces")["workspaces"]

    def snapshot(self, ws: str, session: str, limit: int = 1000) -> Any:
        return self.get(f"/workspace/{ws}/session?session={session}&limit={limit}")


class Extension:
    """The browser with the extension loaded, plus helpers to reach its contexts."""

    def __init__(self, ctx: BrowserContext) -> None:
        self.ctx = ctx
        self.id = EXT_ID

    def url(self, path: str) -> str:
        return f"chrome-extension://{self.id}/{path}"

    def worker(self, timeout: float = 10_000) -> Worker:
        for w in reversed(self.ctx.service_workers):
            if w.url.startswith(self.url("")):
                return w
        return self.ctx.wait_for_event("serviceworker", timeout=timeout)

    def open(self, path: str, size: dict[str, int] | None = None) -> Page:
        page = self.ctx.new_page()
        page.set_viewport_size(size or PANEL_SIZE)
        page.goto(self.url(path))
        return page

    def open_panel(self) -> Page:
        return self.open("sidepanel/sidepanel.html")

    def open_popup(self) -> Page:
        return self.open("popup/popup.html", {"width": 340, "height": 480})

    def use_port(self, page: Page, port: int) -> dict[str, Any]:
        """Pin the server port the way the popup does, and wait for the worker's check."""
        return page.evaluate(
            "async (port) => (await chrome.runtime.sendMessage({type: 'setPort', port})).data",
            port,
        )

    def check(self, page: Page) -> dict[str, Any]:
        """Ask the worker for a check now (as a page opening does); the new status."""
        return page.evaluate(
            "async () => (await chrome.runtime.sendMessage({type: 'checkNow'})).data"
        )

    def status(self, page: Page) -> dict[str, Any] | None:
        return page.evaluate(
            "async () => (await chrome.storage.session.get('status')).status || null"
        )

    def badge(self, page: Page) -> str:
        return page.evaluate("() => chrome.action.getBadgeText({})")


def worker_running(ext: Extension, page: Page) -> bool:
    """Whether the extension's service worker is running (a CDP target), without waking it."""
    cdp = ext.ctx.new_cdp_session(page)
    try:
        targets = cdp.send("Target.getTargets")["targetInfos"]
    finally:
        cdp.detach()
    return any(t["type"] == "service_worker" and t["url"].startswith(ext.url("")) for t in targets)


def stop_worker(ext: Extension, page: Page) -> None:
    """Stop the service worker the way Chrome does when it is idle (CDP), and wait until it is."""
    cdp = ext.ctx.new_cdp_session(page)
    try:
        cdp.send("ServiceWorker.enable")
        cdp.send("ServiceWorker.stopAllWorkers")
    finally:
        cdp.detach()
    wait_until(lambda: not worker_running(ext, page), message="service worker stopped")


def install_pairing_host(profile: Path) -> None:
    """The native messaging host the extension pairs through, as `sidemirror extension
    install-host --dir <profile>/NativeMessagingHosts` writes it: Chromium started with a user
    data dir reads host manifests from that folder. It answers for the servers of this test
    (their runtime files are in `<profile's folder>/runtime`)."""
    install_host(
        [profile / "NativeMessagingHosts"],
        profile.parent / "pairing-host",
        [EXT_ID],
        [profile.parent / "runtime"],
    )


def launch(
    pw: Playwright,
    profile: Path,
    dark: bool = False,
    locale: str | None = None,
    pairing_host: bool = True,
) -> BrowserContext:
    if pairing_host:
        install_pairing_host(profile)
    args = [
        f"--user-agent={USER_AGENT}",
        f"--disable-extensions-except={EXT_DIR}",
        f"--load-extension={EXT_DIR}",
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--disable-features=DisableLoadExtensionCommandLineSwitch",
        # An ordinary website for the overlay tests, served locally (test_overlay.py).
        "--host-resolver-rules=MAP shop.test 127.0.0.1",
    ]
    return pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=False,  # `--headless=new` above: the old headless mode cannot load extensions
        args=args,
        color_scheme="dark" if dark else "light",
        viewport=PANEL_SIZE,
        locale=locale,
    )


def start_extension(
    pw: Playwright,
    profile: Path,
    dark: bool = False,
    locale: str | None = None,
    pairing_host: bool = True,
) -> Extension:
    """Chromium with the extension, pinned to `parked_port()` before it looks for any server;
    with the pairing host installed for it, unless `pairing_host` is False."""
    ext = Extension(launch(pw, profile, dark, locale, pairing_host))
    # The install handler has run once the alarm exists (it is created there); the extension
    # has not probed anything yet (a fresh install waits for a page or the 30 s alarm).
    ext.worker().evaluate(
        """async (port) => {
            for (let i = 0; i < 100 && !(await chrome.alarms.get('health')); i++) {
                await new Promise((r) => setTimeout(r, 50));
            }
            await chrome.storage.local.set({ port });
        }""",
        parked_port(),
    )
    return ext


def wait_until(fn: Any, timeout: float = 10.0, interval: float = 0.1, message: str = "") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting: {message} (last value {last!r})")


def transcript(claude_dir: Path) -> Path:
    return claude_dir / "sample-project" / f"{SAMPLE_SESSION}.jsonl"


def append_exchange(path: Path, prompt: str, answer: str) -> None:
    """Append a real-shaped user prompt and an end_turn assistant reply to a Claude transcript."""
    import uuid

    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    user_id, asst_id = str(uuid.uuid4()), str(uuid.uuid4())
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    user = {
        k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")
    }
    user.update(
        parentUuid=last["uuid"], type="user", uuid=user_id, timestamp=now,
        message={"role": "user", "content": prompt},
    )  # fmt: skip
    asst = json.loads(lines[-1])
    asst.update(parentUuid=user_id, uuid=asst_id, timestamp=now, requestId=f"req_e2e_{asst_id[:8]}")
    asst["message"] = dict(asst["message"], id=f"msg_e2e_{asst_id[:8]}")
    asst["message"]["content"] = [{"type": "text", "text": answer}]
    with path.open("a") as fh:
        fh.write(json.dumps(user) + "\n" + json.dumps(asst) + "\n")


# The timeline is virtualized (only rows near the viewport are in the DOM): the ids it renders
# are collected by scrolling it from top to bottom a screen at a time, the way a reader sees them
# all, then it goes back where it was. An id present twice at once counts twice.
_COLLECT_IDS_JS = """async () => {
  const s = document.querySelector('.session-tab .scroller');
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const atEnd = s.scrollHeight - s.scrollTop - s.clientHeight <= 48;
  const keep = s.scrollTop;
  const order = [];
  const most = new Map();
  const collect = () => {
    const here = new Map();
    for (const e of document.querySelectorAll('.feed [data-item-id]')) {
      const id = e.dataset.itemId;
      here.set(id, (here.get(id) || 0) + 1);
    }
    for (const [id, n] of here) {
      if (!most.has(id)) order.push(id);
      most.set(id, Math.max(n, most.get(id) || 0));
    }
  };
  s.scrollTop = 0;
  await frames();
  for (let guard = 0; guard < 10000; guard++) {
    collect();
    if (s.scrollTop + s.clientHeight >= s.scrollHeight - 1) break;
    s.scrollTop += Math.max(100, s.clientHeight - 100);
    await frames();
  }
  // Back where it was (at the end: until it stays there, as rows measured on the way settle).
  for (let i = 0; i < 20; i++) {
    s.scrollTop = atEnd ? s.scrollHeight : keep;
    await frames();
    if (!atEnd || s.scrollHeight - s.scrollTop - s.clientHeight <= 1) break;
  }
  return order.flatMap((id) => Array(most.get(id)).fill(id));
}"""


def rendered_ids(page: Page) -> list[str]:
    # In front, as a reader sees it: a hidden page gets no animation frames, which both the
    # timeline's rendering and this walk wait for (a background tab took minutes per walk).
    page.bring_to_front()
    return page.evaluate(_COLLECT_IDS_JS)


def sample_workspace(server: Server) -> str:
    ws = [w for w in server.workspaces() if w["directory"] == "/path/to/Demo"]
    assert ws, f"fixture workspace missing: {server.workspaces()}"
    return ws[0]["id"]


def post_activity(server: Server, entries: list[dict[str, Any]] | dict[str, Any]) -> Any:
    """POST /api/activity (one entry or a list) → {"accepted","rejected","ids"}."""
    body = json.dumps(entries).encode()
    return server.request("POST", "/api/activity", body, content_type="application/json")


def open_tab(page: Page, name: str) -> None:
    """Select a side panel tab by its name (Session, Activity, Connect)."""
    page.get_by_role("tab", name=name, exact=True).click()


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A test page server's handler that keeps the test output clean."""

    def send_html(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def local_site(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """A web site of the test's own pages on a free loopback port: its base URL."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
