"""Values that browser tools type into a page never show in a tool call's summary
(core/typed.py), whichever agent made the call."""

from __future__ import annotations

import pytest
from sidemirror.core.models import ToolUseEvent
from sidemirror.core.typed import TYPED, hide_typed_values, verb_key
from sidemirror.sources.codex.exec import CodexExecConverter
from sidemirror.sources.codex.tools import summary as codex_summary
from sidemirror.sources.tool_names import tool_summary


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("mcp__playwright__browser_type", {"element": "Password", "ref": "e5", "text": "hunter2"}),
        (
            "mcp__plugin_playwright_playwright__browser_fill_form",
            {"fields": [{"name": "Password", "type": "textbox", "ref": "e3", "value": "hunter2"}]},
        ),
        ("mcp__playwright__browser_select_option", {"ref": "e7", "values": ["hunter2"]}),
        ("mcp__chrome-devtools__fill", {"uid": "1_4", "value": "hunter2"}),
        ("mcp__chrome-devtools__fill_form", {"elements": [{"uid": "1_4", "value": "hunter2"}]}),
        ("playwright.browser_type", {"ref": "e5", "text": "hunter2"}),  # Codex's spelling
    ],
)
def test_browser_tools_never_show_what_they_type(tool: str, tool_input: object) -> None:
    for shown in (tool_summary(tool, tool_input), codex_summary(tool, tool_input)):
        assert "hunter2" not in shown and TYPED in shown
        assert any(target in shown for target in ("e5", "e3", "e7", "1_4"))  # targets stay


def test_other_tools_keep_their_input() -> None:
    tool_input = {"url": "https://a.test/", "text": "search words"}
    assert hide_typed_values("mcp__playwright__browser_navigate", tool_input) == tool_input
    assert verb_key("mcp__plugin_playwright_playwright__browser_type") == "type"


def test_codex_exec_mcp_calls_hide_typed_values() -> None:
    conv = CodexExecConverter("s")
    out = conv.convert({"type": "item.started", "item": {
        "id": "i", "type": "mcp_tool_call", "server": "playwright", "tool": "browser_type",
        "arguments": {"ref": "e5", "text": "hunter2"}}})  # fmt: skip
    item = out[0].item
    assert isinstance(item, ToolUseEvent) and "hunter2" not in item.input
