"""Reading a whole session back (issue 16, `history`): the panel pages earlier items in as the
reader scrolls up, keeping what is on screen where it is, until "Start of session"; `/` search
finds an early word (by a prefix too, highlighted) and scrolls to it (loading the pages
between); an Edit shows its diff; the Changes view jumps to a tool call. A real transcript, run
again and again, on a real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.support import FIXTURES, SAMPLE_SESSION, panel_on, rendered_ids, sample_workspace
from tests.harness.browser import Extension
from tests.harness.server import Server
from tests.transcripts import write_long_session

REAL = FIXTURES / "claude" / "sample-project" / f"{SAMPLE_SESSION}.jsonl"


EARLY_WORD = "zebracorn"  # said once, in the session's first reply


def long_server(server_factory: Any, tmp_path: Path, size: int) -> Server:
    """A session of `size` bytes: the real one run again and again, its first reply carrying a
    word said nowhere else."""
    claude = tmp_path / "long"
    path = claude / "-path-to-Demo" / f"{SAMPLE_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    write_long_session(path, REAL, size)
    data = path.read_bytes()
    path.write_bytes(
        data.replace(b"analyze the codebase", f"analyze the {EARLY_WORD} codebase".encode(), 1)
    )
    server: Server = server_factory(claude=claude)
    return server


def whole_session(server: Server, ws: str) -> list[dict[str, Any]]:
    """Every item, by paging the server back from its latest (what a full parse gives)."""
    snap = server.snapshot(ws, SAMPLE_SESSION, limit=500)
    items = list(snap["items"])
    more = snap["total"] > len(items)
    while more:
        page = server.get(
            f"/workspace/{ws}/session?session={SAMPLE_SESSION}&before={items[0]['id']}&limit=500"
        )
        items = page["items"] + items
        more = page["has_more"]
    return items


def panel_on_a_long_session(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> tuple[Page, list[dict[str, Any]]]:
    """A panel on a server whose session is a 1 MB transcript, and every item of that session."""
    server = long_server(server_factory, tmp_path, 1 << 20)
    return panel_on(ext, server), whole_session(server, sample_workspace(server))


def test_scrolling_up_pages_back_to_the_first_prompt(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    panel, items = panel_on_a_long_session(ext, server_factory, tmp_path)
    assert len(items) > 1000
    first_prompt = next(i for i in items if i["type"] == "user")
    scroller = panel.locator(".scroller")
    earlier = panel.locator(".earlier")

    # Scrolling to the top loads the page before; what was on screen stays where it was.
    expect(earlier).not_to_have_text(re.compile("Loading"), timeout=20_000)
    # The item at the top of the view as the load starts (seen from a MutationObserver on the
    # marker, which runs before the page can arrive).
    anchor = panel.evaluate(
        """() => new Promise((resolve, reject) => {
            const s = document.querySelector('.scroller');
            const marker = document.querySelector('.earlier');
            const mo = new MutationObserver(() => {
                if (!/Loading/.test(marker.textContent)) return;
                mo.disconnect();
                const top = s.getBoundingClientRect().top;
                const a = [...document.querySelectorAll('.feed > article')]
                    .find((x) => x.getBoundingClientRect().bottom > top);
                resolve([a.dataset.itemId, a.getBoundingClientRect().top]);
            });
            mo.observe(marker, { childList: true, characterData: true, subtree: true });
            // A failure, never a hang: Playwright's evaluate has no timeout of its own.
            setTimeout(() => { mo.disconnect(); reject(new Error('no earlier page loaded')); }, 30000);
            // From the bottom, so that going to the top is a scroll even if the view was there.
            s.scrollTop = s.scrollHeight;
            requestAnimationFrame(() => requestAnimationFrame(() => { s.scrollTop = 0; }));
        })"""
    )
    expect(earlier).not_to_have_text(re.compile("Loading"), timeout=20_000)
    top = _top_of(panel, anchor[0])
    assert top is not None, "the item on screen is still there"
    assert abs(top - anchor[1]) < 2, "the item on screen stayed put"
    assert panel.evaluate(
        "(id) => document.querySelector('.feed > article').dataset.itemId !== id", anchor[0]
    ), "an earlier page came in above it"

    # Keep scrolling up: pages come in until the start of the session.
    for _ in range(200):
        if earlier.text_content() == "Start of session":
            break
        scroller.evaluate("s => { s.scrollTop = 0; }")
        panel.wait_for_function(
            "() => !/Loading/.test(document.querySelector('.earlier').textContent)"
        )
    expect(earlier).to_have_text("Start of session")
    scroller.evaluate("s => { s.scrollTop = 0; }")
    prompt = panel.locator(f".feed [data-item-id='{first_prompt['id']}']")
    expect(prompt).to_be_in_viewport()
    expect(prompt).to_contain_text("/init")
    # Every item of the session is there once, in the server's order.
    ids = rendered_ids(panel)
    assert len(ids) == len(set(ids))
    assert sorted(ids, key=lambda i: int(i.rsplit(".", 1)[1])) == [i["id"] for i in items]


def _top_of(panel: Page, item_id: str) -> float | None:
    top: float | None = panel.evaluate(
        "(id) => document.querySelector(`.feed > article[data-item-id='${id}']`)"
        "?.getBoundingClientRect().top ?? null",
        item_id,
    )
    return top


def test_slash_search_finds_an_early_word_and_scrolls_to_it(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    panel, items = panel_on_a_long_session(ext, server_factory, tmp_path)
    early = next(i for i in items if EARLY_WORD in str(i.get("content")))
    assert early["id"] in {i["id"] for i in items[:10]}
    expect(panel.locator(f".feed [data-item-id='{early['id']}']")).to_have_count(0)

    panel.locator(".feed > article").last.focus()
    panel.keyboard.press("/")
    box = panel.get_by_role("searchbox", name="Search text")
    expect(box).to_be_focused()
    box.fill(EARLY_WORD)
    results = panel.get_by_role("list", name="Search results")
    expect(results.get_by_role("button")).to_have_count(1, timeout=20_000)
    expect(panel.locator(".search-status")).to_have_text("1 result")
    expect(results.get_by_role("button")).to_contain_text(EARLY_WORD)
    # The word is highlighted where the server says it matched (a <mark>, built as a node), and a
    # prefix finds it too: what is typed is matched literally, each word also as a prefix.
    expect(results.locator("mark.hit-match")).to_have_text([EARLY_WORD])
    box.fill(EARLY_WORD[:7])
    expect(results.locator("mark.hit-match")).to_have_text([EARLY_WORD], timeout=20_000)
    box.fill(EARLY_WORD)
    expect(results.locator("mark.hit-match")).to_have_text([EARLY_WORD], timeout=20_000)
    # Choosing it pages back to the start of the session and shows it, focused.
    results.get_by_role("button").click()
    target = panel.locator(f".feed [data-item-id='{early['id']}']")
    expect(target).to_be_in_viewport(timeout=30_000)
    expect(target).to_be_focused()
    expect(target).to_contain_text(EARLY_WORD)
