"""One time format in every tab: the browser's locale with its own 12 or 24 hour clock, and the
full date on hover."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Playwright, expect

from tests.e2e.support import open_tab, post_activity
from tests.harness.browser import start_extension
from tests.harness.server import Server

CLOCKS = {
    "en-US": (r"^\d{1,2}:\d{2} [AP]M$", r"^\d{1,2}:\d{2}:\d{2} [AP]M$"),
    "en-GB": (r"^\d{2}:\d{2}$", r"^\d{2}:\d{2}:\d{2}$"),
}


@pytest.mark.parametrize("locale", sorted(CLOCKS))
def test_session_and_activity_times_follow_the_browser_locale(
    pw: Playwright, server: Server, tmp_path: Path, locale: str
) -> None:
    short, with_seconds = CLOCKS[locale]
    ws = "/tmp/e2e-time-format"
    server.ingest(ws, "t1", [{"type": "user", "content": "what time is it?"},
                             {"type": "assistant", "content": "time to test"}])  # fmt: skip
    post_activity(server, {"type": "command_end", "command": "goto", "args": ["http://x.test"],
                           "workspace": ws, "status": "ok"})  # fmt: skip
    ext = start_extension(pw, tmp_path / "profile", locale=locale)
    try:
        panel = ext.open_panel()
        ext.use_port(panel, server.port)
        stamp = panel.locator(".feed [data-type=assistant] time.ts")
        expect(stamp).to_have_text(re.compile(short), timeout=15_000)
        title = stamp.get_attribute("title") or ""
        assert re.search(r"\b20\d\d\b", title) and re.search(r"day\b", title), title

        open_tab(panel, "Activity")
        act = panel.locator("time.act-time").first
        expect(act).to_have_text(re.compile(with_seconds))
        assert re.search(r"\b20\d\d\b", act.get_attribute("title") or "")
        # The same clock: the activity time without its seconds is how the session tab writes it.
        shown = act.inner_text()
        same = panel.evaluate(
            """(iso) => {
                 const cycle = new Intl.DateTimeFormat(undefined, {hour: 'numeric'})
                   .resolvedOptions().hourCycle;  // a 24-hour clock writes "00:05", not "0:05"
                 const hour = ['h23', 'h24'].includes(cycle) ? '2-digit' : 'numeric';
                 return new Intl.DateTimeFormat(undefined, {hour, minute: '2-digit'})
                   .format(new Date(iso));
               }""",
            act.get_attribute("datetime"),
        )
        assert re.sub(r":\d{2}(?=( [AP]M)?$)", "", shown) == same
    finally:
        ext.ctx.close()
