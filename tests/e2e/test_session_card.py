"""The session card at 420×820, one click from the Session tab's header: its totals are the sums
of the turns the timeline shows, it carries the ids and the first prompt, and its Export button
downloads the session as a file holding every item. Items of another day show their day."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from session_card_data import SID, WS, session_events
from test_a11y import serious

from tests.e2e.support import AXE_JS, panel_on
from tests.harness import paths
from tests.harness.browser import Extension

SHOTS = paths.SHOTS / "session-card"


def number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


def timeline_sums(panel: Page) -> dict[str, float]:
    """The main thread's turns as the timeline writes them: "120 in · 340 out", the cache in
    the title, the cost."""
    sums = {"in": 0.0, "out": 0.0, "cache read": 0.0, "cache write": 0.0, "cost": 0.0, "turns": 0}
    for row in panel.locator(".feed article.turn").all():
        tokens = row.locator(".turn-tokens")
        for part in [
            *tokens.inner_text().split("·"),
            *(tokens.get_attribute("title") or "").split(","),
        ]:
            m = re.fullmatch(r"\s*([\d,]+) (in|out|cache read|cache write)\s*", part)
            if m:
                sums[m[2]] += number(m[1])
        sums["cost"] += number(row.locator(".turn-cost").inner_text())
        sums["turns"] += 1
    return sums


def figure(card: Any, key: str) -> str:
    return str(card.locator(f"[data-figure='{key}'] dd").inner_text())


def test_the_card_sums_the_turns_and_exports_every_item(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    (tmp_path / "no-claude").mkdir()
    server = server_factory(claude=tmp_path / "no-claude")
    events = session_events()
    server.ingest(WS, SID, events)
    panel = panel_on(ext, server)
    panel.set_viewport_size({"width": 420, "height": 820})
    feed = panel.locator(".feed")
    expect(feed.locator("article.turn")).to_have_count(2)

    # Dates: an item of another day says its day; today's say only the time.
    first, later = (t.inner_text() for t in feed.locator("[data-type=user] time.ts").all())
    assert re.search(r"\d{1,2}", first) and re.search(r"[A-Z][a-z]{2}", first), first
    assert not re.search(r"[A-Z][a-z]{2}", re.sub(r"[AP]M", "", later)), later

    sums = timeline_sums(panel)
    panel.get_by_role("button", name="Session card", exact=True).click()
    card = panel.get_by_role("dialog", name=re.compile("Make the parser|Session"))
    expect(card.locator("[data-figure='turns'] dd")).to_have_text("2")
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / "session-card.png"))

    assert number(figure(card, "tokens-input")) == sums["in"]
    assert number(figure(card, "tokens-output")) == sums["out"]
    assert number(figure(card, "tokens-cache_read")) == sums["cache read"]
    assert number(figure(card, "tokens-cache_write")) == sums["cache write"]
    assert number(figure(card, "cost")) == sums["cost"]
    assert figure(card, "cost-subagents") == "$0.125" and figure(card, "cost-main") == "$0.625"
    assert figure(card, "models") == "claude-opus-4-6, claude-haiku-4-5"
    started = figure(card, "started")
    assert re.search(r"[A-Z][a-z]{2}", started), started  # three days ago: with its day
    expect(card.locator(".card-prompt")).to_have_text("Make the parser take its options by name")
    expect(card.locator("[data-id='session'] .card-copy-value")).to_have_text(SID)
    expect(card.locator(".card-file")).to_contain_text("src/parser.py +1 −1")

    # Copy: the id goes to the clipboard, and the card says so.
    card.get_by_role("button", name="Copy session id").click()
    expect(card.locator("[data-id='session'] .card-copied")).to_have_text("Copied")

    # Export, in each format: a file named for the session, holding every item.
    items = server.snapshot(server.workspaces()[0]["id"], SID)["items"]
    assert len(items) == len(events)
    for fmt, ext_name in (("Markdown", "md"), ("HTML", "html"), ("JSONL", "jsonl")):
        card.get_by_role("combobox", name="Export format").select_option(value=ext_name)
        with panel.expect_download() as got:
            card.get_by_role("button", name="Export", exact=True).click()
        download = got.value
        assert download.suggested_filename == f"sidemirror-{SID}.{ext_name}"
        text = Path(download.path()).read_text(encoding="utf-8")
        if ext_name == "jsonl":
            exported = [json.loads(line)["id"] for line in text.splitlines()]
            assert exported == [i["id"] for i in items]
            continue
        said = [i.get("content") or i.get("output") or i.get("input") for i in items]
        places = [text.find(s) for s in said if s]
        assert all(p >= 0 for p in places), (fmt, said, places)
        assert places == sorted(places), (fmt, places)  # oldest first
        assert "Turn 1" in text and "Turn 2" in text
        expect(card.locator(".card-export-note")).to_have_text(f"Saved sidemirror-{SID}.{ext_name}")

    # Escape closes it, and the header button has focus again.
    panel.keyboard.press("Escape")
    expect(card).to_be_hidden()
    expect(panel.get_by_role("button", name="Session card", exact=True)).to_be_focused()


def test_the_card_of_a_recorded_session_names_its_transcript(ext: Extension, server: Any) -> None:
    panel = panel_on(ext, server)
    panel.set_viewport_size({"width": 420, "height": 820})
    panel.add_init_script(path=str(AXE_JS))  # extension pages forbid inline scripts
    panel.reload()
    expect(panel.locator(".feed [data-type=turn_complete]").first).to_be_attached(timeout=20_000)
    panel.get_by_role("button", name="Session card", exact=True).click()
    card = panel.get_by_role("dialog")
    path = card.locator("[data-id='transcript'] .card-copy-value")
    expect(path).to_have_text(re.compile(r"/sample-project/[0-9a-f-]{36}\.jsonl$"), timeout=15_000)
    assert Path(path.inner_text()).is_file()
    expect(card.locator("[data-figure='models'] dd")).to_have_text(re.compile(r"claude-"))
    panel.screenshot(path=str(SHOTS / "session-card-recorded.png"))
    found = panel.evaluate("async () => (await axe.run('dialog.session-card')).violations")
    assert not serious(found), serious(found)
