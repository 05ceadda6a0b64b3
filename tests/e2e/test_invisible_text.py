"""Bidi controls and other invisible characters from the server show as visible markers.

`rm -rf ~/\u202etxt.ssa` renders as `rm -rf ~/ass.txt` if the panel obeys the override; the
panel must show `rm -rf ~/⟨U+202E⟩txt.ssa` instead, in every place server text lands.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.support import open_tab, post_activity, session_list
from tests.harness.browser import Extension
from tests.harness.server import Server

RLO = "\u202e"
COMMAND = f"rm -rf ~/{RLO}txt.ssa"
SHOWN = "rm -rf ~/⟨U+202E⟩txt.ssa"
WS = f"/tmp/e2e-{RLO}gpj.exe"  # a workspace named to look like `exe.jpg`
INVISIBLE = "[\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\u00ad]"


def raw_invisible(page: Page) -> list[str]:
    """Shown text (text nodes, option labels, tooltips, aria labels) still holding a raw one
    (a joiner inside an emoji sequence, between two non-ASCII characters, is meant to stay)."""
    return page.evaluate(
        """(pattern) => {
            const re = new RegExp(pattern, "u");
            const joiner = /(?<=[^\x00-\x7f])[\u200c\u200d](?=[^\x00-\x7f])/gu;
            const bad = (text) => re.test(text.replace(joiner, ""));
            const found = [];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) if (bad(walker.currentNode.data)) found.push(walker.currentNode.data);
            for (const el of document.querySelectorAll("[title], [aria-label]")) {
                for (const a of ["title", "aria-label"]) {
                    const v = el.getAttribute(a);
                    if (v && bad(v)) found.push(`${a}=${v}`);
                }
            }
            return found;
        }""",
        INVISIBLE,
    )


def test_bidi_and_invisible_characters_are_shown_as_markers(ext: Extension, server: Server) -> None:
    server.ingest(WS, f"s{RLO}1", [
        {"type": "user", "content": f"clean up {RLO}txt.ssa please"},
        {"type": "tool_use", "tool_use_id": "t1", "name": f"Bash{RLO}", "kind": "execute",
         "input": COMMAND},
        {"type": "tool_result", "tool_use_id": "t1", "name": "Bash",
         "output": f"removed \u2066{RLO}fdp.exe\u2069 and a\u200bb\ufeffc"},
        {"type": "assistant", "content": f"Done: `{COMMAND}` ran. 👩\u200d💻"},
    ])  # fmt: skip
    post_activity(server, {"type": "command_end", "command": f"type{RLO}", "workspace": WS,
                           "args": ["#cmd", COMMAND], "url": f"http://127.0.0.1:9/{RLO}fdp",
                           "status": "ok", "result": f"ok{RLO}"})  # fmt: skip

    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator(".tool-input")).to_have_text(SHOWN, timeout=10_000)
    expect(feed.locator(".tool-name")).to_have_text("Bash⟨U+202E⟩")
    expect(feed.locator(".tool-output")).to_have_text(
        "removed ⟨U+2066⟩⟨U+202E⟩fdp.exe⟨U+2069⟩ and a⟨U+200B⟩b⟨U+FEFF⟩c"
    )
    # Inline code in Markdown too; an emoji's joiner between two emoji stays a joiner.
    expect(feed.locator("[data-type=assistant] code")).to_have_text(SHOWN)
    expect(feed.locator("[data-type=assistant]")).to_contain_text("👩\u200d💻")
    # The list: the workspace name, its directory (tooltip), and the session (named by its id).
    dialog = session_list(panel)
    dialog.get_by_role("combobox").fill("gpj.exe")
    ws_row = dialog.locator(".sl-group", has_text="gpj.exe")
    expect(ws_row.locator(".sl-ws")).to_have_text(re.compile(r"^e2e-⟨U\+202E⟩gpj\.exe"))
    assert ws_row.get_attribute("title") == "/tmp/e2e-⟨U+202E⟩gpj.exe"
    row = dialog.locator(".sl-session").last
    expect(row.locator(".sl-title")).to_have_text("Session s⟨U+202E⟩1")
    assert (row.get_attribute("title") or "").endswith("\ns⟨U+202E⟩1")
    dialog.get_by_role("combobox").press("Escape")

    # Activity: the summary row and its details.
    open_tab(panel, "Activity")
    row = panel.locator(".act-list > li").first
    expect(row.locator(".act-cmd")).to_have_text("type⟨U+202E⟩")
    expect(row.locator(".act-args")).to_have_text(f"#cmd {SHOWN}")
    row.locator(".act-summary").click()
    details = row.locator(".act-details")
    expect(details).to_contain_text(f"2. {SHOWN}")
    expect(details).to_contain_text("http://127.0.0.1:9/⟨U+202E⟩fdp")
    expect(details).to_contain_text("ok⟨U+202E⟩")

    assert raw_invisible(panel) == []
