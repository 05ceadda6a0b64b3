"""Search (issue 31): an honest count with more on demand, and the words highlighted in the
item a hit opens, on a real session that the server tails while it is appended to."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect
from test_review_panel import open_review_tools

from tests.e2e.support import append_exchange, panel_on, transcript
from tests.harness.browser import Extension
from tests.harness.server import Server

WORD = "quokkafleet"
EXCHANGES = 60  # a prompt and a reply each: 120 hits, past the first page of 50


def test_more_results_on_demand_and_the_opened_item_highlighted(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = panel_on(ext, server, ready=".feed [data-type=tool_use]")
    path = transcript(claude_dir)
    for i in range(EXCHANGES):
        append_exchange(path, f"Prompt {i}: ask the {WORD} about tech-spec {i}",
                        f"Reply {i}: the {WORD} answers.")  # fmt: skip
    expect(panel.get_by_text(f"Reply {EXCHANGES - 1}: the {WORD} answers.")).to_be_attached(
        timeout=20_000
    )
    open_review_tools(panel)  # search and Changes fold with the review tools
    box = panel.get_by_role("searchbox", name="Search text")
    box.fill(WORD)
    status = panel.locator(".search-status")
    results = panel.get_by_role("list", name="Search results")
    more = panel.get_by_role("button", name="Show more results")
    # Every appended line is indexed within a second or so: search again until all are counted.
    expect(status).to_have_text("50 of 120 results", timeout=20_000)
    expect(results.get_by_role("button")).to_have_count(50)
    more.click()
    expect(status).to_have_text("100 of 120 results", timeout=20_000)
    expect(results.get_by_role("button")).to_have_count(100)
    more.click()
    expect(status).to_have_text("120 results", timeout=20_000)
    expect(more).to_be_hidden()

    # The opened item shows the words highlighted, the whole word and a hyphenated one's parts.
    box.fill(f"{WORD} tech-spec")
    # Only the prompts hold both words. (Waiting for any "results" passed on the last search's
    # count, and the click then hit a list about to be replaced.)
    expect(status).to_have_text(f"50 of {EXCHANGES} results", timeout=20_000)
    hit = results.get_by_role("button").filter(has_text=f"Prompt {EXCHANGES - 3}:")
    hit.click()
    expect(status).to_have_text("Shown in the timeline", timeout=20_000)
    highlighted = panel.evaluate(
        """() => [...(CSS.highlights.get('sidemirror-search') || [])].map((r) => r.toString())"""
    )
    assert WORD in highlighted and ("tech-spec" in highlighted or "tech" in highlighted)
    # A new search clears it.
    box.fill("")
    box.press("Escape")
    assert panel.evaluate("() => CSS.highlights.has('sidemirror-search')") is False
