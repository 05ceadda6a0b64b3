"""E2E helpers over the harness (tests/harness): the recorded sample session, writing to it
as an agent would, reading what the panel renders, and local web sites for the browser.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Locator, Page, expect

from tests.harness.browser import Extension
from tests.harness.paths import FIXTURES as ROOT_FIXTURES
from tests.harness.paths import ROOT
from tests.harness.server import Server
from tests.harness.waiting import wait_until

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE_SESSION = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
# A long real session: Bash, Read, Edit, Write, Task with a sub-agent that edits files, plans, costs.
RICH_ID = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def transcript(claude_dir: Path) -> Path:
    return claude_dir / "sample-project" / f"{SAMPLE_SESSION}.jsonl"


def append_exchange(path: Path, prompt: str, answer: str, thinking: str | None = None) -> None:
    """Append a real-shaped user prompt and an end_turn assistant reply to a Claude transcript
    (its reasoning first, as a Thinking block, when `thinking` is given)."""
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
    if thinking is not None:
        block = {"type": "thinking", "thinking": thinking, "signature": "e2e"}
        asst["message"]["content"].insert(0, block)
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


def copy_rich_session(project: Path) -> Path:
    """The rich session's transcript, copied into the project folder `project` (made here)."""
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{RICH_ID}.jsonl"
    path.write_bytes(
        (ROOT_FIXTURES / "claude" / "sample-project" / f"{RICH_ID}.jsonl").read_bytes()
    )
    return path


def rich_server(server_factory: Any, tmp_path: Path) -> Server:
    """A server whose Claude folder holds the rich session alone."""
    claude = tmp_path / "claude-rich"
    copy_rich_session(claude / "sample-project")
    server: Server = server_factory(claude=claude)
    return server


def sample_workspace(server: Server) -> str:
    ws = [w for w in server.workspaces() if w["directory"] == "/path/to/Demo"]
    assert ws, f"fixture workspace missing: {server.workspaces()}"
    return ws[0]["id"]


def open_session(ext: Extension, server: Server, *, pin: bool = True) -> Page:
    """A side panel showing the sample session's tool cards; pointed at `server` first, unless
    `pin` is False (the panel is to find it by itself)."""
    panel = ext.open_panel()
    if pin:
        ext.use_port(panel, server.port)
    expect(panel.locator(".feed [data-type=tool_use]").first).to_be_visible(timeout=20_000)
    return panel


def log_order(panel: Page) -> list[str]:
    """The rendered ids by their place in the log: results attach to their tool cards, so the
    DOM's order is not the log's."""
    return sorted(rendered_ids(panel), key=lambda i: int(i.rsplit(".", 1)[1]))


def assert_matches_server(panel: Page, server: Server, timeout: float = 10) -> list[str]:
    """Rendered items == a fresh snapshot: the same ids, in order, none twice, none missing."""
    snap = server.snapshot(sample_workspace(server), SAMPLE_SESSION)
    expected = [item["id"] for item in snap["items"]]
    assert snap["total"] == len(expected), "the test session must fit one snapshot"
    wait_until(lambda: log_order(panel) == expected, timeout=timeout,
               what="rendered ids equal the server's snapshot")  # fmt: skip
    ids = rendered_ids(panel)
    assert len(ids) == len(set(ids)) == len(expected), f"duplicates in {ids}"
    return expected


def watch_console(page: Page, kinds: tuple[str, ...] = ("warning", "error")) -> list[str]:
    """A list that fills with the text of each console message of `kinds` the page logs."""
    seen: list[str] = []

    def on_console(m: ConsoleMessage) -> None:
        if m.type in kinds:
            seen.append(m.text)

    page.on("console", on_console)
    return seen


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


def panel_on(
    ext: Extension, server: Server, ready: str = ".feed [data-type=turn_complete]"
) -> Page:
    """A side panel pointed at `server`, once `ready` (a selector) is in its timeline."""
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator(ready).first).to_be_attached(timeout=20_000)
    return panel


# The header's name of the session shown: it opens the list of every session (session-list.js).
SHOWN = "#session-list-button"


def session_list(panel: Page) -> Locator:
    """The list of every session, opened from the header; its filter has the focus."""
    panel.locator(SHOWN).click()
    dialog = panel.get_by_role("dialog", name="All sessions")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("combobox", name="Filter sessions")).to_be_focused()
    return dialog


def choose_session(panel: Page, words: str, *, workspace: bool = False) -> None:
    """In the list, as a user with the keyboard: type `words`, then Enter on the first session
    that matches (on its workspace's row, above it, when `workspace`: its latest session)."""
    dialog = session_list(panel)
    field = dialog.get_by_role("combobox", name="Filter sessions")
    field.fill(words)
    expect(dialog.locator(".sl-session").first).to_be_visible()
    if workspace:
        field.press("ArrowUp")
        expect(dialog.locator(".sl-row.selected")).to_have_class(re.compile(r"\bsl-group\b"))
    field.press("Enter")
    expect(dialog).to_be_hidden()


class Forwarder:
    """`sidemirror forward --label LABEL` from another machine (its own HOME, whose Claude Code
    projects folder holds a copy of each of `projects`, a project folder each) to `server`, as docs/remote.md sets it up: the forward
    socket's path and token read with the CLI. Stop it with `stop` (its SSH session ending)."""

    def __init__(self, server: Server, home: Path, label: str, *projects: Path) -> None:
        for project in projects:
            shutil.copytree(project, home / ".claude" / "projects" / project.name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEMIRROR")}
        env.update(PYTHONPATH=str(ROOT / "server"), HOME=str(home))
        which = ["--runtime-dir", str(server.runtime_dir), "--data-dir", str(server.data)]
        sock = _cli(env, "url", "--forward", *which)
        token_file = home / "token"
        token_file.write_text(_cli(env, "token", "--forward", *which))
        token_file.chmod(0o600)
        cmd = [
            sys.executable, "-m", "sidemirror", "forward", "--to", f"unix:{sock}",
            "--token-file", str(token_file), "--label", label,
        ]  # fmt: skip
        self._log = (home / "forward.log").open("wb")
        self.process = subprocess.Popen(
            cmd, env=env, stdout=self._log, stderr=self._log, cwd=home, start_new_session=True
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        self._log.close()


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sidemirror", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()
