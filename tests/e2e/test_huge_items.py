"""Huge items say how big they are: "Reply of 250k characters: shown cut", from `full_length`."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.harness.browser import Extension
from tests.harness.server import Server

WS = "/tmp/e2e-huge"


def test_huge_items_say_their_size_and_show_more_brings_them_whole(
    ext: Extension, server: Server
) -> None:
    reply = "".join(f"line {i:06d} of a long reply\n" for i in range(9_000))  # 252,000 chars
    output = "0123456789" * 120_000  # 1,200,000 chars
    server.ingest(WS, "h1", [
        {"type": "user", "content": "a short prompt, a little over the cap: " + "p" * 600},
        {"type": "assistant", "content": reply},
        {"type": "tool_use", "tool_use_id": "t1", "name": "Bash", "kind": "execute",
         "input": "cat big.log"},
        {"type": "tool_result", "tool_use_id": "t1", "name": "Bash", "output": output},
    ])  # fmt: skip
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-item-id]")).to_have_count(4, timeout=10_000)

    # An ordinary cut item: the count is on the button, no note.
    user = feed.locator("[data-type=user]")
    expect(user.get_by_role("button", name="Show more (639 chars)")).to_be_visible()
    expect(user.locator(".cut-note")).to_have_count(0)

    # Huge ones: the size is said on its own line, in the item's own unit.
    assistant = feed.locator("[data-type=assistant]")
    expect(assistant.locator(".cut-note")).to_have_text("Reply of 252k characters: shown cut")
    tool = feed.locator("[data-type=tool_use]")
    expect(tool.locator(".tool-result .cut-note")).to_have_text(
        "Tool output of 1.2M characters: shown cut"
    )

    # "Show more" brings what the server holds: here all of it.
    assistant.get_by_role("button", name="Show more").click()
    expect(assistant.locator(".cut-note")).to_have_text("Reply of 252k characters, shown whole")
    expect(assistant.locator(".text")).to_contain_text("line 008999 of a long reply")
    assistant.get_by_role("button", name="Show less").click()
    expect(assistant.locator(".cut-note")).to_have_text("Reply of 252k characters: shown cut")
