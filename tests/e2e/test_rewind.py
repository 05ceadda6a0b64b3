"""A rewound Claude Code session in the real panel: the branch point says what the user rewound
to, and the abandoned turns are folded behind one group where they start, live and on a fresh
read; opened, they show in place, dimmed. A second rewind to the same point folds the first
one's group and line inside its own.

The transcript is a real Claude Code 2.1.38 recording (tests/fixtures/claude/spotter/); the
rewinds are appended live in the shape Claude Code writes them (tests/unit/sources/claude/
test_branches.py says how).
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import test_a11y as a11y
from playwright.sync_api import Locator, Page, expect
from sidemirror.core.models import SystemEvent

from tests.harness.browser import Extension
from tests.harness.paths import ROOT
from tests.transcripts import positional_parse
from tests.unit.sources.claude.test_branches import NEW_PROMPT, TOOL_HEAVY, lines, rewind_lines

SHOTS = ROOT / "docs" / "screenshots"
ABANDONED_PROMPT = "scrolling back in xterm.js"
SECOND_PROMPT = "Use port 4001"
GROUP = re.compile(r"^Abandoned by the rewind")


def abandoned_counts(main: Path) -> list[int]:
    """How many items each rewind abandoned (in file order), from a plain parse of the file."""
    items = positional_parse(main.read_bytes())
    rewinds = [i for i in items if isinstance(i, SystemEvent) and i.subtype == "rewind"]
    assert all(r.abandoned_after is not None for r in rewinds)
    return [sum(r.abandoned_after < i.seq < r.seq for i in items) for r in rewinds]  # type: ignore[operator]


def groups(feed: Locator) -> Locator:
    return feed.get_by_role("button", name=GROUP)


def top_of(el: Locator) -> float:
    box = el.bounding_box()
    assert box is not None
    return box["y"]


def text_colour(item: Locator) -> str:
    return str(item.locator(".text").first.evaluate("(el) => getComputedStyle(el).color"))


def precedes(a: Locator, b: Locator) -> bool:
    """Whether `a` comes before `b` in reading order."""
    return bool(
        a.evaluate(
            "(a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING)",
            b.element_handle(),
        )
    )


def check_folded(panel: Page, main: Path) -> None:
    feed = panel.locator(".feed")
    rewind = feed.locator("[data-type=system].sys-rewind")
    expect(rewind).to_contain_text("Rewound to: Phoenix server is starting in the background")
    group = groups(feed)
    expect(group).to_have_count(1)
    [count] = abandoned_counts(main)
    assert count > 10
    expect(group).to_have_text(f"Abandoned by the rewind · {count} items")
    expect(group).to_have_attribute("aria-expanded", "false")
    # Folded: the abandoned turns are not shown until the group is opened.
    expect(feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)).to_have_count(0)
    expect(feed.locator(".abandoned-item")).to_have_count(0)
    # The group sits where the branch happened, before the rewind line.
    assert precedes(group, rewind)
    # The new branch is shown in full after the rewind line.
    expect(feed.locator("[data-type=user]").last).to_contain_text(NEW_PROMPT)
    # Before the branch point nothing is folded: the first prompt shows, not dimmed.
    first = feed.locator("[data-type=user]").first
    expect(first).to_contain_text("start phoenix in background")
    assert precedes(first, group)


def check_opened(panel: Page, main: Path, count: int) -> None:
    """The group is open: its items show in place, dimmed, and every item of the file is there."""
    feed = panel.locator(".feed")
    group = groups(feed)
    expect(group).to_have_attribute("aria-expanded", "true")
    prompt = feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)
    expect(prompt).to_be_visible()
    expect(prompt).to_have_class(re.compile(r"\babandoned-item\b"))
    # Dimmed: its text is drawn lighter than the same kind of item on the branch in use.
    kept = feed.locator("[data-type=user]").first
    assert text_colour(prompt) != text_colour(kept)
    assert precedes(group, prompt)
    assert precedes(prompt, feed.locator("[data-type=system].sys-rewind"))
    dimmed = feed.locator(".abandoned-item[data-item-id], .abandoned-item [data-item-id]")
    expect(dimmed).to_have_count(count)
    expect(feed.locator(".abandoned-item", has_text=NEW_PROMPT)).to_have_count(0)
    expect(feed.locator("[data-item-id]")).to_have_count(len(positional_parse(main.read_bytes())))


def open_session(
    ext: Extension, server_factory: Any, tmp_path: Path, records: list[dict[str, Any]]
) -> tuple[Page, Path, Any]:
    """The recording plus `records` as a Claude Code session, mirrored in a panel."""
    claude = tmp_path / "claude-rewind" / "-home-USER-projects-spotter"
    claude.mkdir(parents=True)
    main = claude / f"{records[3]['sessionId']}.jsonl"
    main.write_text("".join(json.dumps(r) + "\n" for r in records))
    server = server_factory(claude=claude.parent)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    return panel, main, server


def test_a_rewind_folds_the_abandoned_turns(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    base = lines(TOOL_HEAVY)
    panel, main, server = open_session(ext, server_factory, tmp_path, base)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)).to_be_visible(
        timeout=15_000
    )
    expect(groups(feed)).to_have_count(0)

    with open(main, "a") as fh:  # the user rewinds and goes on: appended live
        fh.write("".join(json.dumps(r) + "\n" for r in rewind_lines(base, compact_after=False)))
    check_folded(panel, main)
    [count] = abandoned_counts(main)

    at = top_of(groups(feed))
    groups(feed).click()
    check_opened(panel, main, count)
    assert abs(top_of(groups(feed)) - at) <= 1  # opened in place: the group did not move
    shots = SHOTS if os.environ.get("SIDEMIRROR_UPDATE_SCREENSHOTS") else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    groups(feed).scroll_into_view_if_needed()
    panel.mouse.move(0, 0)
    panel.wait_for_timeout(200)
    path = shots / "rewind.png"
    panel.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    at = top_of(groups(feed))
    groups(feed).click()  # closed again: folded as before, the group where it was
    expect(groups(feed)).to_have_attribute("aria-expanded", "false")
    expect(feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)).to_have_count(0)
    assert abs(top_of(groups(feed)) - at) <= 1

    # A fresh read of the same session folds the same items; the keyboard opens the group.
    fresh = ext.open_panel()
    ext.use_port(fresh, server.port)
    check_folded(fresh, main)
    group = groups(fresh.locator(".feed"))
    group.focus()
    fresh.keyboard.press("Enter")
    check_opened(fresh, main, count)


def test_a_second_rewind_to_the_same_point_folds_the_first_inside_it(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    base = lines(TOOL_HEAVY)
    first = rewind_lines(base, compact_after=False)
    panel, main, _ = open_session(ext, server_factory, tmp_path, base + first)
    feed = panel.locator(".feed")
    expect(groups(feed)).to_have_count(1, timeout=15_000)

    # The user rewinds again to the same message: the first branch is abandoned too.
    again = copy.deepcopy(first[0])
    again["uuid"] = "9e000000-0000-4000-8000-0000000000aa"
    again["message"]["content"] = SECOND_PROMPT
    with open(main, "a") as fh:
        fh.write(json.dumps(again) + "\n")
    inner, outer = abandoned_counts(main)
    assert outer > inner
    rewinds = feed.locator("[data-type=system].sys-rewind")
    # Only the outer group shows, with the second rewind's line and prompt after it.
    expect(groups(feed)).to_have_count(1)
    expect(groups(feed)).to_have_text(f"Abandoned by the rewind · {outer} items")
    expect(rewinds).to_have_count(1)
    expect(feed.locator("[data-type=user]").last).to_contain_text(SECOND_PROMPT)
    expect(feed.locator("[data-type=user]", has_text=NEW_PROMPT)).to_have_count(0)

    # Opened: the first branch, dimmed, with the first rewind's own group still closed.
    groups(feed).first.click()
    expect(groups(feed)).to_have_count(2)
    expect(groups(feed).nth(1)).to_have_text(f"Abandoned by the rewind · {inner} items")
    expect(groups(feed).nth(1)).to_have_attribute("aria-expanded", "false")
    expect(rewinds).to_have_count(2)
    expect(rewinds.first).to_have_class(re.compile(r"\babandoned-item\b"))
    expect(feed.locator(".abandoned-item[data-type=user]", has_text=NEW_PROMPT)).to_be_visible()
    expect(feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)).to_have_count(0)
    groups(feed).nth(1).click()
    expect(
        feed.locator(".abandoned-item[data-type=user]", has_text=ABANDONED_PROMPT)
    ).to_be_visible()
    # Closing the outer group hides the inner one with it.
    groups(feed).first.click()
    expect(groups(feed)).to_have_count(1)
    expect(feed.locator("[data-type=user]", has_text=ABANDONED_PROMPT)).to_have_count(0)
    expect(feed.locator("[data-type=user]", has_text=NEW_PROMPT)).to_have_count(0)

    # Folded and opened, the feed stays accessible (axe-core; the page is read afresh).
    assert a11y.serious(a11y.axe_violations(panel, ".feed .abandoned-group")) == []
    groups(feed).first.click()
    expect(groups(feed)).to_have_count(2)
    assert a11y.serious(panel.evaluate("async () => (await axe.run(document)).violations")) == []
