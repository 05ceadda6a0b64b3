"""The extension under fault (issue 8): the server killed for 60 s, the service worker stopped
again and again, and seven side panels at once (more than Chromium's 6 HTTP/1.1 connections per
host) — every panel keeps updating and ends with exactly the server's items.

Real `sidemirror serve` (killed with SIGKILL, restarted on the same port and dirs), real Chromium
with the extension loaded, a real Claude Code transcript appended live; no mocks.
"""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

from playwright.sync_api import expect

from tests.e2e.support import (
    append_exchange,
    assert_matches_server,
    log_order,
    open_session,
    open_tab,
    post_activity,
    transcript,
    watch_console,
)
from tests.harness.browser import Extension, stop_worker, worker_running
from tests.harness.server import Server
from tests.harness.waiting import wait_until

OUTAGE_S = 60  # issue 8: "server killed for 60 s then back"
RETRY_WITHIN_S = 18  # the backoff is capped at 15 s (+20 % jitter): the next try is this near
# What follows the next try (a ticket, the resume, rendering) is bounded, not timed: on a
# loaded 2-core machine it takes seconds.
BACK_WITHIN_S = RETRY_WITHIN_S + 40
WORKER_STOPS = 5
PANELS = 7  # one more than Chromium's 6 connections per host for HTTP/1.1


def refuses(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_server_killed_for_60_s_then_back(ext: Extension, server: Server, claude_dir: Path) -> None:
    panel = open_session(ext, server)
    warnings = watch_console(panel)
    before = assert_matches_server(panel, server)
    wait_until(lambda: ext.badge(panel) == "on", what="badge on")

    server.kill()
    killed = time.monotonic()
    banner = panel.locator(".banner.reconnecting")
    expect(banner).to_be_visible(timeout=10_000)
    wait_until(lambda: ext.badge(panel) == "off", timeout=30, what="badge off while down")

    # The agent keeps working while the server is down: real lines, spread over the outage.
    answers = []
    for i, at in enumerate((5, 25, 45)):
        time.sleep(max(0.0, killed + at - time.monotonic()))
        answer = f"Answer {i + 1} written while the server was down."
        append_exchange(transcript(claude_dir), f"Prompt {i + 1} during the outage", answer)
        answers.append(answer)
        assert refuses(server.port)
        expect(banner).to_be_visible()
    time.sleep(max(0.0, killed + OUTAGE_S - time.monotonic()))
    # Still waiting after a minute, with a countdown (the backoff), showing nothing invented.
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("reconnecting in")
    # The next try is never further than the cap, however long the outage (a countdown only
    # goes down, so this holds on a slow machine too).
    countdown = re.search(r"reconnecting in (\d+) s", banner.inner_text())
    assert countdown and int(countdown.group(1)) <= RETRY_WITHIN_S, banner.inner_text()
    assert log_order(panel) == before

    server.start()  # same port, same data dir, same transcript dir
    restarted = time.monotonic()
    expect(banner).to_be_hidden(timeout=BACK_WITHIN_S * 1000)
    for answer in answers:
        remaining = BACK_WITHIN_S - (time.monotonic() - restarted)
        expect(panel.get_by_text(answer)).to_be_visible(timeout=max(remaining, 0.1) * 1000)
    back_after = time.monotonic() - restarted
    print(f"outage {restarted - killed:.1f} s; panel back {back_after:.1f} s after the restart")

    after = assert_matches_server(panel, server)
    assert after[: len(before)] == before and len(after) > len(before)
    wait_until(lambda: ext.badge(panel) == "on", timeout=BACK_WITHIN_S, what="badge recovers")
    # And it is live again, not just caught up.
    append_exchange(transcript(claude_dir), "After the outage", "Live again after the outage.")
    expect(panel.get_by_text("Live again after the outage.")).to_be_visible(timeout=10_000)
    assert_matches_server(panel, server)
    # Gaps are ruled out against the server's log by assert_matches_server above.
    assert not [w for w in warnings if "duplicate" in w], warnings


def test_worker_stopped_repeatedly_panel_keeps_updating(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = open_session(ext, server)
    warnings = watch_console(panel)
    before = assert_matches_server(panel, server)
    wait_until(lambda: ext.badge(panel) == "on", what="badge on")

    for i in range(1, WORKER_STOPS + 1):
        # Blank the badge first, so "on" afterwards is proof a fresh worker checked and set it.
        panel.evaluate("() => chrome.action.setBadgeText({text: ''})")
        stop_worker(ext, panel)
        answer = f"Written while the worker is stopped ({i}/{WORKER_STOPS})."
        append_exchange(transcript(claude_dir), f"Prompt {i} with the worker stopped", answer)
        # The panel streams straight from the server: it does not need the worker.
        expect(panel.get_by_text(answer)).to_be_visible(timeout=10_000)

        popup = ext.open_popup()  # a user opens the toolbar popup: Chrome starts the worker
        answer = f"Written while the worker starts again ({i}/{WORKER_STOPS})."
        append_exchange(transcript(claude_dir), f"Prompt {i} as the worker starts", answer)
        wait_until(lambda: ext.badge(panel) == "on", timeout=10, what=f"badge recovers ({i})")
        assert worker_running(ext, panel)
        expect(panel.get_by_text(answer)).to_be_visible(timeout=10_000)
        popup.close()

    after = assert_matches_server(panel, server)
    assert after[: len(before)] == before
    assert panel.locator(".banner.reconnecting").is_hidden()
    # Gaps are ruled out against the server's log by assert_matches_server above.
    assert not [w for w in warnings if "duplicate" in w], warnings


def test_seven_panels_all_keep_updating(ext: Extension, server: Server, claude_dir: Path) -> None:
    # Side-panel pages opened as tabs: the same extension pages, in the same profile, sharing the
    # same per-host connection limit as real side panels in seven windows.
    panels = [open_session(ext, server, pin=(i == 0)) for i in range(PANELS)]
    for i in range(3):
        answer = f"Seven panels, answer {i + 1}."
        append_exchange(transcript(claude_dir), f"Seven panels, prompt {i + 1}", answer)
        for n, panel in enumerate(panels, 1):
            expect(panel.get_by_text(answer), f"panel {n}").to_be_visible(timeout=10_000)
    for panel in panels:
        assert_matches_server(panel, server)

    # The first panels close (the first one opened holds the shared stream): the others take over
    # without losing or doubling anything, and a panel opened now joins mid-stream.
    for panel in panels[:3]:
        panel.close()
    panels = panels[3:]
    append_exchange(transcript(claude_dir), "After three panels closed", "Still live in the rest.")
    panels.append(open_session(ext, server, pin=False))
    for n, panel in enumerate(panels, 1):
        expect(panel.get_by_text("Still live in the rest."), f"panel {n}").to_be_visible(
            timeout=10_000
        )
        assert_matches_server(panel, server)

    # Each panel's Activity tab streams too (twice the connections if each panel had its own).
    for panel in panels:
        open_tab(panel, "Activity")
    post_activity(server, {"type": "command_end", "command": "snapshot", "status": "ok",
                           "url": "http://127.0.0.1:5173/", "workspace": "/tmp/sm-e2e-fault",
                           "duration_ms": 12})  # fmt: skip
    for n, panel in enumerate(panels, 1):
        expect(panel.locator(".act-list > li"), f"panel {n}").to_have_count(1, timeout=10_000)
    open_tab(panels[0], "Session")
    append_exchange(transcript(claude_dir), "With Activity open", "Sessions still live too.")
    # The Session tabs behind Activity take the item too (a hidden timeline builds its rows
    # when shown): each shows it when the reader comes back.
    for n, panel in enumerate(panels, 1):
        open_tab(panel, "Session")
        expect(panel.get_by_text("Sessions still live too."), f"panel {n}").to_be_visible(
            timeout=10_000
        )
        assert_matches_server(panel, server)
