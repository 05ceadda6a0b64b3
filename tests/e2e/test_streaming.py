"""Live partial text (`assistant_delta`) from a real stream-json capture with partial messages."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from playwright.sync_api import expect

from tests.e2e.support import SHOWN
from tests.harness.browser import Extension
from tests.harness.paths import ROOT
from tests.harness.server import Server

HAIKU = ROOT / "tests" / "fixtures" / "stream-json" / "streaming-haiku.jsonl"
WS = "/tmp/e2e-streaming-haiku"


def ingest_stream_json(server: Server, lines: list[str]) -> dict[str, object]:
    q = urllib.parse.urlencode({"workspace": WS, "format": "stream-json"})
    body = "".join(line + "\n" for line in lines).encode()
    return server.request("POST", f"/api/ingest?{q}", body, content_type="application/x-ndjson")


def test_partial_text_bubble_is_replaced_by_the_final_item(ext: Extension, server: Server) -> None:
    lines = Path(HAIKU).read_text().splitlines()
    final = next(json.loads(x) for x in lines if json.loads(x)["type"] == "assistant")
    text = final["message"]["content"][0]["text"]
    # `system/init` alone opens the session, so the panel can be streaming before the text comes.
    ingest_stream_json(server, lines[:1])
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator(SHOWN)).to_contain_text("e2e-streaming-haiku")
    expect(panel.locator(".session-tab[data-stream=live]")).to_be_attached(timeout=10_000)
    # Record what the feed shows over time: the partial bubble lives only until the final item.
    panel.evaluate(
        """() => {
            window.__seen = [];
            const feed = document.querySelector('.feed');
            new MutationObserver(() => {
                const s = feed.querySelector('.streaming');
                const text = s ? s.querySelector('.text').textContent : null;
                const last = window.__seen.at(-1);
                const finals = feed.querySelectorAll('[data-type=assistant]').length;
                if (!last || last.text !== text || last.finals !== finals)
                    window.__seen.push({ text, finals, index: s ? [...feed.children].indexOf(s) : -1 });
            }).observe(feed, { childList: true, subtree: true, characterData: true });
        }"""
    )
    result = ingest_stream_json(server, lines[1:])
    assert result["rejected"] == 0

    feed = panel.locator(".feed")
    assistant = feed.locator("[data-type=assistant]")
    expect(assistant).to_have_count(1, timeout=10_000)
    expect(assistant.locator(".text")).to_contain_text("Functions compile clean")
    expect(feed.locator(".streaming")).to_have_count(0)
    expect(feed.locator("[data-type=turn_complete]")).to_have_count(1)

    seen = panel.evaluate("() => window.__seen")
    partial = [s for s in seen if s["text"]]
    assert partial, f"no partial bubble was shown: {seen}"
    # It grew by appending, always a prefix of the final text, before any final item existed...
    texts = [s["text"] for s in partial]
    assert all(text.startswith(t) for t in texts), texts
    assert all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))
    assert len(texts) > 3 and all(s["finals"] == 0 for s in partial)
    # ...and the final item took its place: same position, the bubble gone.
    index = partial[-1]["index"]
    assert assistant.evaluate("(a) => [...a.parentElement.children].indexOf(a)") == index
