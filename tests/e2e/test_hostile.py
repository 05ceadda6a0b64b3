"""Hostile session content renders as inert text: no element, no script, no request."""

from __future__ import annotations

import re

from playwright.sync_api import Page, Request, expect

from tests.e2e.support import session_list
from tests.harness.browser import Extension
from tests.harness.server import Server

PAYLOADS = [
    "<img src=x onerror=\"window.__pwned=1;fetch('https://attacker.invalid/img')\">",
    "<script>window.__pwned=2</script>",
    '<a href="javascript:window.__pwned=3">click me</a>',
    '<svg onload="window.__pwned=4"><image href="https://attacker.invalid/svg.png"/></svg>',
    '<iframe src="https://attacker.invalid/frame"></iframe>',
    '<img src="https://attacker.invalid/pixel.gif">',
    "<style>body{background:url(https://attacker.invalid/css)}</style>",
]
WS = '/tmp/e2e-<img src=x onerror="window.__pwned=5">'


def unsafe_attributes(panel: Page) -> list[str]:
    """Event handlers and URL attributes in the panel, except the one kind Markdown may make: a
    web or mail link that opens in a new tab with no opener and no referrer."""
    return panel.evaluate(
        """() => [...document.querySelectorAll('main *')].flatMap((e) => [...e.attributes]
              .filter((a) => /^on/i.test(a.name) || /^(href|src|srcdoc|action|formaction|xlink:href)$/i.test(a.name))
              .filter((a) => !(e.tagName === 'A' && a.name === 'href'
                               && /^(https?:\\/\\/|mailto:)/i.test(a.value)
                               && e.target === '_blank' && e.rel === 'noopener noreferrer'))
              .map((a) => `${e.tagName}.${a.name}=${a.value.slice(0, 60)}`))"""
    )


def test_hostile_content_is_inert(ext: Extension, server: Server) -> None:
    requests: list[str] = []
    ext.ctx.on("request", lambda r: requests.append(r.url) if isinstance(r, Request) else None)
    long = PAYLOADS[0] + " " + "<b>bold</b> " * 80 + PAYLOADS[3]
    events: list[dict[str, object]] = []
    for i, p in enumerate(PAYLOADS):
        events += [
            {"type": "user", "content": p},
            {"type": "assistant", "content": f"answer {i}: {p}\n```html\n{p}\n```"},
            {"type": "thinking", "content": p},
            {
                "type": "tool_use",
                "tool_use_id": f"h{i}",
                "name": p[:40],
                "kind": "other",
                "input": p,
            },
            {
                "type": "tool_result",
                "tool_use_id": f"h{i}",
                "name": p[:40],
                "output": p,
                "is_error": i % 2 == 1,
            },
        ]
    events += [
        {"type": "system", "subtype": "compact", "content": PAYLOADS[1]},
        {"type": "system", "subtype": "<b>x</b>", "content": PAYLOADS[2]},
        {"type": "error", "message": PAYLOADS[3]},
        {"type": "plan", "entries": [{"content": p, "status": "<b>s</b>"} for p in PAYLOADS[:3]]},
        {
            "type": "turn_complete",
            "turn": 1,
            "model": PAYLOADS[0],
            "cost_usd": None,
            "cost_source": "unknown_model",
        },
        {"type": "user", "content": long},
    ]
    server.ingest(WS, "<script>s</script>", events)

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-item-id]")).to_have_count(len(events), timeout=10_000)

    # Every payload is visible as literal text...
    for p in PAYLOADS:
        expect(feed.locator("[data-type=user]", has_text=p).first).to_be_attached()
    dialog = session_list(panel)  # the list names every workspace: as text too
    expect(dialog.locator(".sl-group", has_text="onerror").first).to_be_visible()
    dialog.get_by_role("combobox").press("Escape")
    # ...and produced no markup: only the panel's own elements exist in the feed.
    found = panel.evaluate(
        """() => [...document.querySelectorAll('.feed *')]
              .filter((e) => !e.closest('svg.icon'))
              .map((e) => e.tagName.toLowerCase())
              .filter((t) => !['article','header','span','div','time','p','pre','code','button',
                               'details','summary','ul','li','strong','a','br','figure',
                               'figcaption'].includes(t))"""
    )
    assert found == []
    assert unsafe_attributes(panel) == []

    # "Show more" fetches the full item, still as text.
    item = feed.locator("[data-type=user]").last
    item.get_by_role("button", name="Show more").click()
    expect(item.locator(".text")).to_contain_text(PAYLOADS[3])
    expect(item.get_by_role("button", name="Show less")).to_be_visible()
    assert item.locator("img, svg:not(.icon), b").count() == 0

    # Open every disclosure so nothing stays unrendered, then check nothing ran or loaded.
    panel.evaluate("() => document.querySelectorAll('details').forEach((d) => (d.open = true))")
    panel.wait_for_timeout(300)
    assert panel.evaluate("() => window.__pwned ?? null") is None
    # The panel's own routes; notes and the status-line figures carry the (hostile) session id
    # percent-encoded in the query, which is data, not a request the content made.
    api = re.compile(
        r"^http://127\.0\.0\.1:\d+/(health|api/(identify|pair|ticket|workspaces|sessions|activity/latest-workspace"
        r"|decisions|attention|search|notes\?|statusline/claude\?)|workspace/[0-9a-f]{12}/)"
    )
    foreign = [u for u in requests if not (u.startswith(ext.url("")) or api.match(u))]
    assert foreign == []
    assert not [u for u in requests if "attacker" in u or u.endswith("/x")]


# Markdown attacks: links to scripts and data, raw HTML, images as beacons, and nesting deep
# enough to hurt a recursive renderer. Each must stay text or become a harmless link.
MARKDOWN_ATTACKS = [
    "[js](javascript:window.__pwned=10)",
    "[mixed case](JaVaScRiPt:window.__pwned=11)",
    "[entity](javascript&#58;window.__pwned=12)",
    "[data](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xMzwvc2NyaXB0Pg==)",
    "[inside the extension](../popup/popup.html)",
    "<javascript:window.__pwned=14>",
    "[by reference][r]\n\n[r]: javascript:window.__pwned=15",
    "![beacon](https://attacker.invalid/beacon.png)",
    "![ref beacon][img]\n\n[img]: https://attacker.invalid/ref.png",
    "![inline data](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "![svg data](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9IndpbmRvdy5fX3B3bmVkPTE2Ii8+)",
    "<img src=https://attacker.invalid/raw.png onerror=window.__pwned=17>",
    "<div onclick=window.__pwned=18>html block</div>\n\n<script>window.__pwned=19</script>",
    "| a | <img src=https://attacker.invalid/cell.png> |\n|---|---|\n"
    "| [x](javascript:window.__pwned=20) | ![t](https://attacker.invalid/t.png) |",
    "```html\n<script>window.__pwned=21</script>\n```",
    '[ok](https://example.org/safe "a title")',
]
DEEP = {
    "quotes": ">" * 5000 + " the deep end",
    "lists": "\n".join("  " * i + "- level" for i in range(400)) + "\n\nthe deep end",
    "emphasis": "*" * 5000 + "the deep end" + "*" * 5000,
    "brackets": "[" * 5000 + "the deep end" + "](https://attacker.invalid/x)" * 50,
}


def test_markdown_attacks_stay_inert(ext: Extension, server: Server) -> None:
    requests: list[str] = []
    ext.ctx.on("request", lambda r: requests.append(r.url) if isinstance(r, Request) else None)
    events: list[dict[str, object]] = []
    for attack in MARKDOWN_ATTACKS:
        events += [{"type": "user", "content": attack}, {"type": "assistant", "content": attack}]
    for name, text in DEEP.items():
        events.append({"type": "assistant", "content": f"{name}:\n\n{text}"})
    server.ingest("/tmp/e2e-markdown-attacks", "md", events)

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-item-id]")).to_have_count(len(events), timeout=10_000)
    # Deep items arrive cut: open each whole, so the full hostile text is rendered too.
    closed = feed.get_by_role("button", name="Show more")
    for left in range(len(DEEP), 0, -1):
        expect(closed).to_have_count(left)
        closed.first.click()
    expect(feed.get_by_role("button", name="Show less")).to_have_count(len(DEEP))
    panel.evaluate("() => document.querySelectorAll('details').forEach((d) => (d.open = true))")

    # Nothing that could load or run was built; the only links are web links in a new tab.
    assert feed.locator("img, script, iframe, object, embed, style, svg:not(.icon)").count() == 0
    assert unsafe_attributes(panel) == []
    hrefs = feed.locator("a").evaluate_all("(as) => as.map((a) => a.getAttribute('href'))")
    # (Bare URLs become links too, so a URL in raw HTML is a link here; it loads nothing.)
    assert hrefs and all(h.startswith("https://") for h in hrefs), hrefs
    assert {
        "https://attacker.invalid/beacon.png",
        "https://attacker.invalid/ref.png",
        "https://attacker.invalid/t.png",
        "https://example.org/safe",
    } <= set(hrefs)
    # Refused links keep their words; images are their alt text, not a picture.
    expect(
        feed.locator("[data-type=user]", has_text="[js](javascript:window.__pwned=10)")
    ).to_be_visible()
    expect(feed.locator(".md-image", has_text="[image: beacon]").first).to_be_visible()
    expect(feed.locator(".md-image", has_text="[image: inline data]").first).to_be_visible()
    expect(
        feed.locator("[data-type=user]", has_text="<script>window.__pwned=19</script>")
    ).to_be_visible()
    expect(feed.locator("figure.md-code .code-lang").first).to_have_text("html")
    # Nothing is lost to depth: blocks nested too deep for Markdown are shown as written, whole.
    for name in DEEP:
        item = feed.locator("[data-type=assistant]", has_text=f"{name}:")
        expect(item.locator(".text")).to_contain_text("the deep end")
        if name in ("quotes", "lists"):
            expect(item.locator(".text.md")).to_have_count(0)
    assert panel.evaluate("() => document.querySelectorAll('.feed *').length") > 0

    panel.wait_for_timeout(300)
    assert panel.evaluate("() => window.__pwned ?? null") is None
    assert not [u for u in requests if "attacker" in u or u.startswith("data:")]
