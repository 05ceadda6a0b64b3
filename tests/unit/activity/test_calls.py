"""A session's tool calls as windows (activity/calls.py): which names drove a browser, how a
call is labelled, and when its window opens and closes."""

from __future__ import annotations

import pytest
from sidemirror.activity.calls import SessionCalls, call_label, is_browser_tool
from sidemirror.core.models import SessionItem, ToolResultEvent, ToolUseEvent, TurnCompleteEvent
from sidemirror.core.store import SessionLog


@pytest.mark.parametrize(
    "name",
    [
        "mcp__playwright__browser_click",  # Claude Code, Playwright MCP
        "mcp__chrome-devtools__navigate_page",  # Chrome DevTools MCP
        "mcp__claude-in-chrome__computer",  # Claude in Chrome
        "playwright__browser_snapshot",  # Codex's spelling of an MCP tool
        "mcp__puppeteer__puppeteer_navigate",
        "browser_navigate",  # an ACP agent's title
        "mcp_playwright_browser_type",  # Gemini CLI
    ],
)
def test_browser_tools_by_name(name: str) -> None:
    assert is_browser_tool(name)


@pytest.mark.parametrize(
    "name", ["Bash", "Edit", "WebFetch", "mcp__github__create_issue", "mcp__memory__browse"]
)
def test_other_tools_are_not_browser_tools(name: str) -> None:
    assert not is_browser_tool(name)


def test_labels_name_the_verb_and_its_target() -> None:
    assert call_label("mcp__playwright__browser_click", '{"element":"Log in","ref":"e5"}') == (
        "click e5"
    )
    assert call_label("mcp__playwright__browser_navigate", '{"url":"http://x.test/a"}') == (
        "navigate http://x.test/a"
    )
    assert call_label("mcp__playwright__browser_snapshot", "{}") == "snapshot"
    assert call_label("mcp_playwright_browser_type", '{"ref":"e2"}') == "type e2"  # Gemini CLI
    assert call_label("playwright__browser_close", "{}") == "close"  # Codex
    assert call_label("mcp__claude-in-chrome__navigate", '{"url":"u"}') == "navigate u"
    assert call_label("mcp__chrome-devtools__take_screenshot", "not json") == "take_screenshot"
    long = call_label("mcp__playwright__browser_type", '{"text":"' + "x" * 200 + '"}')
    assert len(long) == 80 and long.endswith("…")


def use(n: int, name: str, ts: str, kind: str = "mcp") -> ToolUseEvent:
    return ToolUseEvent(id=f"e.{n}", seq=n, ts=ts, tool_use_id=f"t{n}", name=name, kind=kind,
                        input="{}")  # fmt: skip


def log_of(items: list[SessionItem], epoch: str = "e") -> SessionLog:
    log = SessionLog("w" * 12, "s1", "claude", epoch)
    for item in items:
        log.items.append(item)
    return log


def test_windows_close_at_the_result_or_the_end_of_the_turn() -> None:
    items: list[SessionItem] = [
        use(1, "mcp__playwright__browser_click", "2026-01-01T00:00:01Z"),
        ToolResultEvent(id="e.2", seq=2, ts="2026-01-01T00:00:03Z", tool_use_id="t1", output=""),
        use(3, "mcp__playwright__browser_wait_for", "2026-01-01T00:00:04Z"),  # never answered
        use(4, "Edit", "2026-01-01T00:00:05Z", kind="edit"),
        TurnCompleteEvent(id="e.5", seq=5, ts="2026-01-01T00:00:09Z", turn=None),
        use(6, "mcp__playwright__browser_snapshot", "2026-01-01T00:00:10"),  # naive: UTC
    ]
    calls = SessionCalls("s1", "claude")
    log = log_of(items[:5])
    calls.update(log)
    t1, t3, t4 = calls.calls["t1"], calls.calls["t3"], calls.calls["t4"]
    assert (t1.end or 0) - t1.start == 2 and t1.browser and t1.turn == 1
    assert t3.end == t4.end == t1.start + 8  # closed by the turn's end
    assert not t4.browser and calls.last_edit is t4
    log.items.append(items[5])
    calls.update(log)  # only the new item is read
    t6 = calls.calls["t6"]
    assert t6.turn == 2 and t6.end is None and t6.start == t1.start + 9
    assert t6.contains(t6.start + 1000, now=t6.start + 2000)

    # The session read again under a new epoch: scanned from its start, nothing left over.
    again = log_of([items[5]], epoch="f")
    calls.update(again)
    assert set(calls.calls) == {"t6"} and calls.last_edit is None and calls.turn == 1
