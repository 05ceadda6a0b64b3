"""Page events without chrome.debugger: on a site the user turned the overlay on for, what the
page shows as errors (console.error, an uncaught exception, a failed fetch) reaches the Activity
tab from the extension itself, filed under the workspace whose agent acts in the browser, and is
linked to the Playwright call running at the time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from sidemirror.core.clock import now_iso

from tests.e2e.support import QuietHandler, local_site, open_tab, post_activity
from tests.harness.browser import Extension
from tests.harness.waiting import wait_until
from tests.server.helpers.browser_session import record

CWD = "/tmp/sidemirror-e2e-page-events"
SESSION = "7c3e9a10-5b2d-4f6e-8a91-0d4c2b6e1f37"
CALL_ID = "toolu_01PageEventsClick000001"
PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Login</title>
<link rel="icon" href="data:,"></head><body>
<button id="login" onclick="login()">Log in</button>
<script>
function login() {
  fetch("/api/session", {method: "POST"});
  console.error("Login failed", {code: 7});
  setTimeout(function render() { throw new Error("theme is not defined"); });
}
</script></body></html>"""


class Handler(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_html(PAGE)

    def do_POST(self) -> None:  # noqa: N802
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def site() -> Iterator[str]:
    with local_site(Handler) as url:
        yield url


def test_page_errors_reach_the_activity_tab_linked_to_the_running_call(
    ext: Extension, server_factory: Any, tmp_path: Path, site: str
) -> None:
    # The agent's Playwright click is running (no result yet) in a recorded Claude session.
    projects = tmp_path / "page-claude"
    transcript = projects / "-tmp-sidemirror-e2e-page-events" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    use = [{"type": "tool_use", "id": CALL_ID, "name": "mcp__playwright__browser_click",
            "input": {"element": "Log in", "ref": "e7"}}]  # fmt: skip
    transcript.write_text(record("prompt", "Log in and check it works.", now_iso(), 0, SESSION, CWD)
                          + record("use", use, now_iso(), 1, SESSION, CWD))  # fmt: skip
    server = server_factory(claude=projects)
    wait_until(lambda: server.workspaces(), what="the transcript is indexed")
    url = f"{site}/login"
    host = site.removeprefix("http://")
    post_activity(server, {"type": "command_end", "command": "navigate", "args": [url], "url": url,
                           "workspace": CWD, "status": "ok"})  # fmt: skip

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    page = ext.ctx.new_page()
    page.goto(url)
    open_tab(panel, "Activity")
    switch = panel.get_by_role("switch", name=f"Show element refs on {host}")
    switch.click()
    expect(switch).to_be_checked()
    wait_until(lambda: page.evaluate("() => typeof window.__sidemirrorPageEvents") == "boolean",
               what="the page script is in the open tab")  # fmt: skip

    page.bring_to_front()
    page.click("#login")
    rows = panel.locator(".act-list > li")
    failed = rows.filter(has_text="request.failed")
    expect(failed).to_have_count(1)
    expect(failed.locator(".act-args")).to_have_text(f"POST {site}/api/session 500")
    logged = rows.filter(has_text="Login failed")
    expect(logged.locator(".act-error")).to_have_text('Login failed {"code":7}')
    thrown = rows.filter(has_text="theme is not defined")
    expect(thrown).to_have_count(1)
    expect(thrown.locator(".act-args")).to_contain_text(f"at render ({site}/login:")
    # Each names the call that was running: the Playwright click of the session.
    for row in (failed, logged, thrown):
        expect(row.get_by_role("button", name="from Claude: click e7 · turn 1")).to_be_visible()
    # Reported by the extension, not by a debugger: source "page".
    logged.locator(".act-summary").click()
    source = logged.locator(".act-details dt", has_text="Source")
    expect(source.locator("xpath=following-sibling::dd[1]")).to_have_text("page")
