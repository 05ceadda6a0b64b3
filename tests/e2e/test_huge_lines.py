"""A 9.6 MB tool result and a 10 MB reply, each one line of a live Claude Code transcript, show in
the panel as cut items that say their size, and the turn closes with its tokens and cost.

The lines are real: the last tool result and the final reply of a recorded session
(tests/fixtures/claude/sample-project), their text enlarged, appended while the server tails it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.e2e.support import FIXTURES
from tests.harness.browser import Extension

SESSION = FIXTURES / "claude" / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
LINES = SESSION.read_bytes().splitlines(keepends=True)
RESULT, REPLY = 20, 28  # a Bash result and the end_turn reply that closes the turn


def _enlarged(n: int, path: list[str | int], size: int) -> bytes:
    rec = json.loads(LINES[n])
    holder: Any = rec
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += "\n-rw-r--r--  1 dev staff  4096 report.txt" * (size // 42)
    return json.dumps(rec, ensure_ascii=False).encode() + b"\n"


def test_huge_lines_show_cut_and_the_turn_closes_with_its_cost(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    claude = tmp_path / "claude-huge"
    project = claude / "-path-to-Demo"
    project.mkdir(parents=True)
    transcript = project / SESSION.name
    transcript.write_bytes(b"".join(LINES[:RESULT]))
    server = server_factory(claude=claude)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=tool_use]").first).to_be_visible(timeout=30_000)

    with transcript.open("ab") as fh:  # the agent's writes: the rest of the turn, live
        fh.write(_enlarged(RESULT, ["message", "content", 0, "content"], 9_600_000))
        fh.write(b"".join(LINES[RESULT + 1 : REPLY]))
        fh.write(_enlarged(REPLY, ["message", "content", 0, "text"], 10_000_000))
        fh.write(b"".join(LINES[REPLY + 1 :]))

    reply = feed.locator("[data-type=assistant]").last
    expect(reply.locator(".cut-note")).to_have_text(
        re.compile(r"^Reply of (9\.\d|10(\.\d)?)M characters: shown cut$"), timeout=60_000
    )
    expect(feed.locator(".tool-result .cut-note").last).to_have_text(
        re.compile(r"^Tool output of 9\.\dM characters: shown cut$")
    )
    # The turn still closes, with what it cost (the recorded usage and model are in the line).
    turn = feed.locator("[data-type=turn_complete]").last
    expect(turn).to_be_visible()
    expect(turn).to_contain_text("$")
