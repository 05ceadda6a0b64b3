"""An exported session's HTML reads in Chromium with JavaScript off and makes no request
(issue 33): one self-contained file, its tool calls folding open without a script, its
hostile text shown as text. The export is the real CLI's, from a real server."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Playwright, Route, expect

from tests.harness.browser import plain_chromium
from tests.harness.server import Server
from tests.server.test_export import HOSTILE, LINK, SID, export, transcript


def test_the_html_export_reads_with_javascript_off_and_asks_for_nothing(
    pw: Playwright, tmp_path: Path
) -> None:
    transcript(tmp_path / "claude")
    out = tmp_path / "session.html"
    with Server(tmp_path, claude_dir=tmp_path / "claude" / "projects", token=None, log_level=None):
        done = export(tmp_path, SID, "-o", str(out))
        assert done.returncode == 0, done.stderr
    url = out.as_uri()
    browser = plain_chromium(pw)
    try:
        context = browser.new_context(
            java_script_enabled=False, viewport={"width": 420, "height": 820}
        )
        asked: list[str] = []
        routed: list[str] = []

        def only_the_file(route: Route) -> None:
            routed.append(route.request.url)
            if route.request.url == url:
                route.continue_()
            else:
                route.abort()

        context.route("**/*", only_the_file)
        page = context.new_page()
        page.on("request", lambda request: asked.append(request.url))
        failed: list[str] = []
        page.on("requestfailed", lambda request: failed.append(request.url))
        page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")

        assert page.evaluate("1 + 1") == 2  # Playwright's own evaluation still runs
        assert page.locator("script").count() == 0
        expect(page.locator("h1")).to_be_visible()
        expect(page.get_by_text(HOSTILE).first).to_be_visible()  # shown as text, whole
        link = page.get_by_role("link", name=LINK)
        expect(link).to_have_attribute("rel", "noopener noreferrer")
        # A tool call folds open by its summary alone: no script needed to read it.
        tool = page.locator("details:not(.abandoned)").first
        expect(tool).not_to_have_attribute("open", "")
        tool.locator("summary").click()
        expect(tool).to_have_attribute("open", "")
        expect(tool.locator("pre").first).to_be_visible()

        assert asked == [url], asked  # the file, and nothing else
        assert [u for u in routed if u != url] == [], routed
        assert not failed, failed
        context.close()
    finally:
        browser.close()
