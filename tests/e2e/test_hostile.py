"""Hostile session content renders as inert text: no element, no script, no request."""

from __future__ import annotations

import re

from playwright.sync_api import Request, expect
from support import Extension, Server

PAYLOADS = [
    "<img src=x onerror=\"window.__pwned=1;fetch('https://attacker.invalid/img')\">",
    "<script>window.__pwned=2</script>",
    '<a href="javascript:window.__pwned=3">click me</a>',
    '<svg onload="window.__pwned=4"><image href="https://attacker.invalid/svg.png"/></svg>',
    '<iframe src="https://attacker.invalid/frame"></iframe>',
    '<img src="https://attacker.invalid/pixel.gif">',
    "[link](javascript:alert(1)) ![img](https://attacker.invalid/md.png)",
    "<style>body{background:url(https://attacker.invalid/css)}</style>",
]
WS = '/tmp/e2e-<img src=x onerror="window.__pwned=5">'


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
    expect(panel.locator("#ws-select option", has_text="onerror").first).to_be_attached()
    # ...and produced no markup: only the panel's own elements exist in the feed.
    found = panel.evaluate(
        """() => [...document.querySelectorAll('.feed *')]
              .filter((e) => !e.closest('svg.icon'))
              .map((e) => e.tagName.toLowerCase())
              .filter((t) => !['article','header','span','div','time','p','pre','code','button',
                               'details','summary','ul','li','strong'].includes(t))"""
    )
    assert found == []
    attrs = panel.evaluate(
        """() => [...document.querySelectorAll('main *')].flatMap((e) => [...e.attributes]
              .filter((a) => /^on/i.test(a.name) || /^(href|src|srcdoc|action|formaction|xlink:href)$/i.test(a.name))
              .map((a) => `${e.tagName}.${a.name}`))"""
    )
    assert attrs == []

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
    api = re.compile(
        r"^http://127\.0\.0\.1:\d+/(health|api/(identify|pair|ticket|workspaces|activity/latest-workspace)"
        r"|workspace/[0-9a-f]{12}/)"
    )
    foreign = [u for u in requests if not (u.startswith(ext.url("")) or api.match(u))]
    assert foreign == []
    assert not [u for u in requests if "attacker" in u or u.endswith("/x")]
