"""A rewound Claude Code session in the real panel: the branch point says what the user rewound
to, and the abandoned turns are dimmed and folded, live and on a fresh read.

The transcript is a real Claude Code 2.1.38 recording (tests/fixtures/claude/spotter/); the
rewind is appended live in the shape Claude Code writes it (tests/unit/sources/claude/
test_branches.py says how).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from sidemirror.core.models import SystemEvent
from support import ROOT, Extension

from tests.transcripts import positional_parse
from tests.unit.sources.claude.test_branches import NEW_PROMPT, TOOL_HEAVY, lines, rewind_lines

SHOTS = ROOT / "docs" / "screenshots"


def abandoned_count(main: Path) -> int:
    """How many items the rewind abandoned, from a plain parse of the file."""
    items = positional_parse(main.read_bytes())
    [rewind] = [i for i in items if isinstance(i, SystemEvent) and i.subtype == "rewind"]
    assert rewind.abandoned_after is not None
    return sum(rewind.abandoned_after < i.seq < rewind.seq for i in items)


def check_folded(panel: Page, main: Path) -> None:
    feed = panel.locator(".feed")
    rewind = feed.locator("[data-type=system].sys-rewind")
    expect(rewind).to_contain_text("Rewound to: Phoenix server is starting in the background")
    group = feed.locator("details.abandoned")
    expect(group).to_have_count(1)
    count = abandoned_count(main)
    assert count > 10
    summary = group.locator(":scope > summary")
    expect(summary).to_have_text(f"Abandoned by the rewind · {count} items")
    expect(group.locator("[data-item-id]")).to_have_count(count)
    # Folded: the abandoned prompt is there but hidden until the group is opened.
    abandoned_prompt = group.locator("[data-type=user]", has_text="scrolling back in xterm.js")
    expect(abandoned_prompt).to_be_hidden()
    # The new branch is shown in full after the rewind line.
    expect(feed.locator("[data-type=user]").last).to_contain_text(NEW_PROMPT)
    expect(feed.locator(".abandoned [data-type=user]", has_text=NEW_PROMPT)).to_have_count(0)
    # Before the branch point nothing is folded: the first prompt stays in the open feed.
    expect(feed.locator(":scope > [data-type=user]").first).to_contain_text(
        "start phoenix in background"
    )
    # Every item of the file is in the DOM, folded or not.
    expect(feed.locator("[data-item-id]")).to_have_count(len(positional_parse(main.read_bytes())))


def test_a_rewind_folds_the_abandoned_turns(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    base = lines(TOOL_HEAVY)
    claude = tmp_path / "claude-rewind" / "-home-USER-projects-spotter"
    claude.mkdir(parents=True)
    main = claude / f"{base[3]['sessionId']}.jsonl"
    main.write_bytes(TOOL_HEAVY.read_bytes())
    server = server_factory(claude=claude.parent)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=user]", has_text="scrolling back in xterm.js")).to_be_visible(
        timeout=15_000
    )
    expect(feed.locator("details.abandoned")).to_have_count(0)

    with open(main, "a") as fh:  # the user rewinds and goes on: appended live
        fh.write("".join(json.dumps(r) + "\n" for r in rewind_lines(base, compact_after=False)))
    check_folded(panel, main)

    group = feed.locator("details.abandoned")
    group.locator(":scope > summary").click()
    expect(group.locator("[data-type=user]", has_text="scrolling back in xterm.js")).to_be_visible()
    opacity = group.locator(".abandoned-items").evaluate("(el) => getComputedStyle(el).opacity")
    assert float(opacity) < 1
    shots = SHOTS if os.environ.get("SIDEMIRROR_UPDATE_SCREENSHOTS") else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    group.locator(":scope > summary").scroll_into_view_if_needed()
    panel.mouse.move(0, 0)
    panel.wait_for_timeout(200)
    path = shots / "rewind.png"
    panel.screenshot(path=str(path))
    assert path.stat().st_size > 10_000

    # A fresh read of the same session folds the same items.
    fresh = ext.open_panel()
    ext.use_port(fresh, server.port)
    check_folded(fresh, main)
