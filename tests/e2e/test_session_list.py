"""The session list at the panel's size (420×820), in real Chromium against a real server with
three workspaces of this machine and two forwarded hosts: every session grouped by workspace,
each row with its facts, a filter typed over titles and workspaces, a choice made with the
keyboard alone; and the header's one line, still one line while a permission request waits.
Screenshots go to tests/harness/paths.py SHOTS, "session-list"."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from test_attention import connected_panel, finish, permission_request, start_hook

from tests.e2e.support import Forwarder, open_tab, panel_on
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.paths import FIXTURES
from tests.harness.waiting import wait_until

SHOTS = paths.SHOTS / "session-list"
LOCAL_PROJECTS = ("sample-project", "spotter", "schema-task-tools")  # three workspaces
HOSTS = {"devbox": "sample-project", "buildbox": "spotter"}


def shot(panel: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.screenshot(path=str(SHOTS / f"{name}.png"))


def header_height(panel: Page) -> float:
    return float(panel.locator(".session-line").evaluate("el => el.getBoundingClientRect().height"))


def listing(server: Any) -> dict[str, list[dict[str, Any]]]:
    """Workspace name → its sessions, as the server lists them."""
    out = {}
    for ws in server.workspaces():
        out[ws["name"]] = server.get(f"/workspace/{ws['id']}/sessions")["sessions"]
    return out


def test_the_list_holds_every_workspace_and_host_filters_and_opens_by_keyboard(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    local = tmp_path / "local-claude"
    for name in LOCAL_PROJECTS:
        shutil.copytree(FIXTURES / "claude" / name, local / name)
    server = server_factory(claude=local)
    hosts = [
        Forwarder(server, tmp_path / f"{label}-home", label, FIXTURES / "claude" / project)
        for label, project in HOSTS.items()
    ]
    try:

        def all_listed() -> dict[str, list[dict[str, Any]]] | None:
            found = listing(server)
            labels = {name.split(":", 1)[0] for name in found if ":" in name}
            local_ws = [name for name in found if ":" not in name]
            return found if labels == set(HOSTS) and len(local_ws) >= 3 else None

        found = wait_until(all_listed, 60, what="3 local workspaces and 2 hosts listed")
        panel = panel_on(ext, server, ready=".feed [data-type=user]")
        expect(panel.locator(".session-line")).to_be_visible()
        panel.locator("#session-list-button").click()
        dialog = panel.get_by_role("dialog", name="All sessions")
        expect(dialog).to_be_visible()
        filt = dialog.get_by_role("combobox", name="Filter sessions")
        expect(filt).to_be_focused()
        total = sum(len(v) for v in found.values())
        status = dialog.locator(".session-list-status")
        expect(status).to_have_text(f"{total} sessions in {len(found)} workspaces")
        # It fills the panel: the list's box is the tab's, below the tabs, to the bottom.
        box = dialog.bounding_box()
        assert box is not None and box["width"] == 420 and box["y"] + box["height"] >= 819
        expect(dialog.locator(".sl-auto")).to_be_visible()
        shot(panel, "list-open")

        # Each row: title, agent, state (inferred: dashed), start, span, turns, cost, short id.
        name, sessions = next((n, s) for n, s in found.items() if n.startswith("devbox:"))
        priced = next(s for s in sessions if s["cost_usd"])
        row = dialog.locator(f'.sl-session[data-session="{priced["id"]}"]').first
        filt.fill(priced["id"][:8])
        expect(row).to_be_visible()
        facts = row.locator(".sl-facts")
        expect(facts).to_contain_text("claude")
        expect(facts).to_contain_text(f"{priced['turns']} turn")
        expect(facts).to_contain_text("$")
        expect(row.locator(".sl-id")).to_have_text(priced["id"][:8])
        chip = row.locator(".chip")
        expect(chip).to_have_text(priced["state"])
        expect(chip).to_have_attribute("data-exact", json.dumps(priced["exact"]))

        # The filter over workspaces: a host's label keeps its workspace, and only it.
        filt.fill("devbox")
        groups = dialog.locator(".sl-group .sl-ws")
        expect(groups).to_have_count(1)
        expect(groups.first).to_have_text(name)
        expect(status).to_have_text(f"{len(sessions)} of {total} sessions match, in 1 workspace")
        shot(panel, "list-filtered")

        # The keyboard alone: the first match is chosen, ArrowDown moves, Enter opens.
        newest_first = sorted(sessions, key=lambda s: s["last_activity"], reverse=True)
        assert len(newest_first) >= 2
        selected = dialog.locator(".sl-row.selected")
        expect(selected).to_have_attribute("data-session", newest_first[0]["id"])
        filt.press("ArrowDown")
        expect(selected).to_have_attribute("data-session", newest_first[1]["id"])
        filt.press("Enter")
        expect(dialog).to_be_hidden()
        button = panel.locator("#session-list-button")
        expect(button).to_contain_text(name)
        title = (newest_first[1]["title"] or "").strip()[:40]
        if title:
            expect(button).to_contain_text(title)
        expect(button.locator(".auto-badge")).to_be_hidden()  # pinned to the choice
        shot(panel, "list-chosen")

        # Back to Auto, and Escape closes without a change.
        button.click()
        expect(filt).to_be_focused()
        filt.press("Control+Home")
        expect(selected).to_have_class(re.compile(r"\bsl-auto\b"))
        filt.press("Enter")
        expect(button.locator(".auto-badge")).to_be_visible()
        button.click()
        filt.press("Escape")
        expect(dialog).to_be_hidden()
        expect(button).to_be_focused()

        # The Sessions view opens the same list, over the Session tab.
        open_tab(panel, "Sessions")
        panel.get_by_role("button", name="All sessions…").click()
        expect(dialog).to_be_visible()
        expect(filt).to_be_focused()
        expect(panel.get_by_role("tab", name="Session", exact=True)).to_have_attribute(
            "aria-selected", "true"
        )
    finally:
        for host in hosts:
            host.stop()


def test_the_header_stays_one_line_while_a_permission_waits(ext: Extension, server: Any) -> None:
    panel = connected_panel(ext, server)
    one_line = header_height(panel)
    assert one_line < 40
    hook = start_hook(server, permission_request())
    card = panel.locator(".session-tab .decision-card")
    expect(card).to_be_visible(timeout=15_000)
    chip = panel.locator(".session-line .session-state")
    expect(chip).to_contain_text("waiting")
    line = panel.locator(".session-line")
    assert abs(header_height(panel) - one_line) < 0.5
    # Its parts side by side: the name, the state and the gauge on one row.
    tops = line.evaluate(
        "el => [...el.children].filter(c => !c.hidden).map(c => c.getBoundingClientRect())"
        ".map(r => Math.round(r.top + r.height / 2))"
    )
    assert max(tops) - min(tops) <= 2, tops
    shot(panel, "header-permission-waits")
    card.get_by_role("button", name="Deny").click()
    finish(hook)
