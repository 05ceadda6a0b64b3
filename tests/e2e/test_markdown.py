"""Markdown in prompts and replies, on a real Claude Code transcript (claude-code-viewer's
sample project, tests/fixtures/NOTICE.md): headings are heading elements, tables are tables, code
blocks say their language, links open in a new tab; a sub-agent's prompt is the Task's."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from test_a11y import axe_violations, serious

from tests.e2e.support import append_exchange
from tests.harness.browser import Extension

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "sample-project"
SESSION = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
# A table as Claude Code writes one (from the codemie-code fixture's spec, tests/fixtures).
TABLE_REPLY = """## Current State Analysis

### Existing Commands

| Command | Purpose | Category |
|---------|---------|----------|
| `setup` | Interactive configuration wizard | Setup |
| `profile` | Manage provider profiles | Config |

See [the docs](https://example.org/docs "Docs") or mail <mailto:dev@example.org>.

```python
print("hello")
```"""


def real_transcript(tmp_path: Path) -> Path:
    claude = tmp_path / "real-claude"
    (claude / "sample-project").mkdir(parents=True)
    dest = claude / "sample-project" / f"{SESSION}.jsonl"
    shutil.copy(REAL / f"{SESSION}.jsonl", dest)
    dest.chmod(0o644)
    return claude


def test_a_real_transcript_renders_as_markdown(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    claude = real_transcript(tmp_path)
    server = server_factory(claude=claude)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")

    # The session's closing reply: "## ✅ TODO App Creation Complete", "### 🏗️ **Project…**".
    reply = feed.locator("[data-type=assistant]", has_text="TODO App Creation Complete")
    expect(reply.locator("h2")).to_have_text("✅ TODO App Creation Complete", timeout=15_000)
    expect(reply.locator("h3").first).to_have_text("🏗️ Project Structure Created")
    expect(reply.locator("h3 strong").first).to_have_text("Project Structure Created")
    expect(reply.locator("li").first).to_contain_text("Next.js 14")
    assert "##" not in reply.locator(".text").inner_text()

    # Each sub-agent's prompt is its Task's, not the user's.
    sub = feed.locator("[data-type=user]", has_text="Create React components for the TODO app")
    expect(sub.locator(".who")).to_have_text("Task prompt · Task")
    own = feed.locator("[data-type=user]", has_text="Please update CLAUDE.md")
    expect(own.locator(".who")).to_have_text("You")

    # A reply with a table, appended live to the real transcript.
    append_exchange(claude / "sample-project" / f"{SESSION}.jsonl", "compare them", TABLE_REPLY)
    live = feed.locator("[data-type=assistant]", has_text="Current State Analysis")
    table = live.locator("table")
    expect(table).to_be_visible(timeout=15_000)
    expect(table.locator("thead th")).to_have_text(["Command", "Purpose", "Category"])
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first.locator("td code")).to_have_text("setup")
    expect(live.locator("h2")).to_have_text("Current State Analysis")
    expect(live.locator("h3")).to_have_text("Existing Commands")

    link = live.get_by_role("link", name="the docs")
    expect(link).to_have_attribute("href", "https://example.org/docs")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(live.get_by_role("link", name="dev@example.org")).to_have_attribute(
        "href", "mailto:dev@example.org"
    )
    code = live.locator("figure.md-code")
    expect(code.locator(".code-lang")).to_have_text("python")
    expect(code.locator("pre code")).to_have_text('print("hello")')

    # Headings, tables, links and code keep the panel accessible (axe-core, as test_a11y).
    assert serious(axe_violations(panel, ".feed table")) == []


def test_show_more_opens_in_place_to_full_height_and_show_less_closes(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory()
    lines = "\n".join(f"output line {i}" for i in range(120))
    reply = "# Report\n\n" + "\n".join(f"- point {i} with **weight**" for i in range(80))
    server.ingest("/tmp/e2e-show-more", "m1", [
        {"type": "assistant", "content": reply},
        {"type": "tool_use", "tool_use_id": "t1", "name": "Bash", "kind": "execute", "input": "ls"},
        {"type": "tool_result", "tool_use_id": "t1", "name": "Bash", "output": lines},
    ])  # fmt: skip
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")

    answer = feed.locator("[data-type=assistant]")
    expect(answer.locator("h1")).to_have_text("Report", timeout=15_000)
    answer.get_by_role("button", name="Show more").click()
    expect(answer.locator("li")).to_have_count(80)
    expect(answer.locator("li strong").last).to_have_text("weight")
    answer.get_by_role("button", name="Show less").click()
    expect(answer.get_by_role("button", name="Show more")).to_have_attribute(
        "aria-expanded", "false"
    )

    out = feed.locator(".tool-output")
    cut_height = out.evaluate("(e) => e.clientHeight")
    feed.locator(".tool-result").get_by_role("button", name="Show more").click()
    expect(out).to_contain_text("output line 119")
    # In place, whole: the box is as tall as its text, nothing left to scroll inside it.
    expect(out).to_have_class("tool-output expanded")
    size = out.evaluate("(e) => ({client: e.clientHeight, scroll: e.scrollHeight})")
    assert size["scroll"] <= size["client"] + 1 and size["client"] > cut_height * 3
    feed.locator(".tool-result").get_by_role("button", name="Show less").click()
    expect(out).not_to_contain_text("output line 119")
    assert out.evaluate("(e) => e.clientHeight") <= cut_height + 1
