"""The Connect tab against the real MCP endpoint: URL, protocol, live tool list, health, snippets."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from tests.e2e.support import open_tab
from tests.harness.auth import TOKEN
from tests.harness.browser import Extension
from tests.harness.server import Server


def test_connect_view_lists_live_tools_and_tracks_health(ext: Extension, server: Server) -> None:
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    open_tab(panel, "Connect")
    endpoint = f"http://127.0.0.1:{server.port}/mcp"
    expect(panel.locator("#mcp-endpoint")).to_have_text(endpoint)
    health = panel.locator("#mcp-health")
    expect(health).to_have_attribute("role", "status")
    expect(health).to_have_attribute("data-state", "ok", timeout=10_000)
    expect(health).to_contain_text("Reachable — 5 tools")
    expect(panel.locator("#mcp-protocol")).to_have_text("2025-06-18")
    expect(panel.locator("#mcp-server")).to_contain_text("sidemirror")

    # The tool list comes from tools/list: names, titles and descriptions.
    tools = panel.locator(".mcp-tool")
    expect(tools).to_have_count(5)
    names = tools.locator(".mcp-tool-name").all_text_contents()
    assert sorted(names) == [
        "sidemirror_browser_events",
        "sidemirror_get_activity",
        "sidemirror_get_session",
        "sidemirror_list_workspaces",
        "sidemirror_report_browser_action",
    ]
    report = panel.locator(".mcp-tool[data-tool=sidemirror_report_browser_action]")
    expect(report.locator(".mcp-tool-desc")).to_contain_text("activity feed")
    expect(report.locator(".mcp-tool-params")).to_contain_text("command*")
    expect(panel.get_by_role("heading", name="Tools (5)")).to_be_visible()

    # Snippets: the token is masked until revealed; copying copies the real one.
    claude = panel.locator("#snippet-claude")
    expect(claude).to_have_text(
        re.compile(
            rf"^claude mcp add --transport http sidemirror {re.escape(endpoint)} "
            r'--header "Authorization: Bearer •+"$'
        )
    )
    assert TOKEN not in panel.locator(".connect-tab").inner_text()
    config = json.loads(panel.locator("#snippet-json").inner_text())
    assert config["mcpServers"]["sidemirror"]["url"] == endpoint
    panel.get_by_role("button", name="Show token").click()
    expect(claude).to_contain_text(f"Bearer {TOKEN}")
    config = json.loads(panel.locator("#snippet-json").inner_text())
    assert config["mcpServers"]["sidemirror"]["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    panel.get_by_role("button", name="Hide token").click()
    expect(claude).not_to_contain_text(TOKEN)

    # Copy: spy on the clipboard write (the real write still happens).
    panel.evaluate(
        """() => {
            const write = navigator.clipboard.writeText.bind(navigator.clipboard);
            window.__copied = [];
            navigator.clipboard.writeText = (t) => { window.__copied.push(t); return write(t); };
        }"""
    )
    panel.get_by_role("button", name="Copy Claude Code command").click()
    expect(panel.locator(".connect-tab .copied")).to_have_text(re.compile("Copied|Copy failed"))
    panel.get_by_role("button", name="Copy endpoint URL").click()
    assert panel.evaluate("() => window.__copied") == [
        f"claude mcp add --transport http sidemirror {endpoint} "
        f'--header "Authorization: Bearer {TOKEN}"',
        endpoint,
    ]

    # The server stops: the indicator turns to an error with a message, and back when it returns.
    server.stop()
    expect(health).to_have_attribute("data-state", "error", timeout=10_000)
    expect(health).to_contain_text(re.compile("Error|Unreachable"))
    server.start()
    expect(health).to_have_attribute("data-state", "ok", timeout=30_000)
    expect(tools).to_have_count(5)


def test_the_claude_code_command_is_above_the_fold(ext: Extension, server: Server) -> None:
    # The panel's own size (420×820): what someone connecting an agent came for is the command,
    # seen whole without scrolling, once the tool list has loaded and pushed everything down.
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    open_tab(panel, "Connect")
    expect(panel.locator(".mcp-tool")).to_have_count(5, timeout=10_000)
    command = panel.locator("#snippet-claude")
    expect(command).to_contain_text("claude mcp add --transport http sidemirror")
    box = command.bounding_box()
    assert box is not None
    viewport = panel.viewport_size
    assert viewport == {"width": 420, "height": 820}
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    scroller = panel.locator(".connect-tab")
    assert scroller.evaluate("(el) => el.scrollTop") == 0
    copy = panel.get_by_role("button", name="Copy Claude Code command")
    copy_box = copy.bounding_box()
    assert copy_box is not None and copy_box["y"] + copy_box["height"] <= viewport["height"]
