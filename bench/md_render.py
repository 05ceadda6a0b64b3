"""Markdown rendering of long replies in the side panel's page, in real Chromium.

A reply reaches the timeline cut to 500 characters (the append→rendered section measures that
path); "Show more" renders the whole reply. This measures that: the extension's own
`renderMarkdown` (sidepanel/markdown.js: the vendored tokenizer, then DOM nodes) on long replies
made of real Claude Code reply text (tests/fixtures, claude-code-viewer's sample project: headings,
bold, lists, code), against the plain text node the panel drew before Markdown, for the same text.
Each figure is the median of `RUNS` renders, including a forced layout of the inserted node.

It runs in an extension page that contacts no server (the vendored README opened as a document:
same origin, same modules), so no port is probed.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import extension_browser

ROOT = Path(__file__).resolve().parent.parent
REPLIES = ROOT / "tests/fixtures/claude/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SIZES = (2_000, 20_000, 100_000)  # 100,000: the longest text drawn as Markdown (markdown.js)
RUNS = 15

MEASURE_JS = r"""
async ({ text, runs }) => {
  const { renderMarkdown } = await import("/sidepanel/markdown.js");
  const once = (draw) => {
    const el = document.createElement("div");
    const t0 = performance.now();
    draw(el);
    document.body.append(el);
    void el.offsetHeight;  // layout included: what the reader waits for
    const ms = performance.now() - t0;
    el.remove();
    return ms;
  };
  const md = [], plain = [];
  for (let i = 0; i < runs; i++) {
    md.push(once((el) => renderMarkdown(el, text)));
    plain.push(once((el) => el.append(document.createTextNode(text))));
  }
  return { md, plain };
}
"""


def reply_text(size: int) -> str:
    """Real assistant replies of the fixture, joined until `size` characters."""
    texts = []
    for line in REPLIES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") != "assistant":
            continue
        for block in record["message"].get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text" and len(block["text"]) > 200:
                texts.append(block["text"])
    out = ""
    while len(out) < size:
        for t in texts:
            out += t + "\n\n"
    return out[:size]


async def markdown(root: Path) -> dict[str, Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        return {"error": "playwright is not installed in this venv (pip install playwright)"}
    out: dict[str, Any] = {"runs": RUNS, "sizes": {}}
    async with async_playwright() as pw:
        ctx = await extension_browser.launch(pw, root / "markdown" / "profile")
        try:
            out["chromium"] = ctx.browser.version if ctx.browser else None
            await extension_browser.wait_worker(ctx)
            page = await ctx.new_page()
            await page.goto(
                f"chrome-extension://{extension_browser.EXT_ID}/lib/page/vendor/README.md"
            )
            for size in SIZES:
                got = await page.evaluate(MEASURE_JS, {"text": reply_text(size), "runs": RUNS})
                out["sizes"][str(size)] = {
                    "markdown_ms": round(statistics.median(got["md"]), 2),
                    "plain_ms": round(statistics.median(got["plain"]), 2),
                }
        finally:
            await ctx.close()
    return out
