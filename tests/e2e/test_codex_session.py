"""Codex sessions in the real panel: an archived, compressed rollout renders as its plain twin
would, and a live rollout interrupted by the user closes its turn as stopped.

Both are the recorded Codex Desktop rollout in tests/fixtures/codex/ (the second under a new
session id, cut after its first tool calls); the `turn_aborted` appended live is in the shape
Codex writes it (tests/fixtures/NOTICE.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zstandard
from playwright.sync_api import expect

from tests.harness.browser import Extension
from tests.harness.paths import ROOT

ROLLOUT = next((ROOT / "tests" / "fixtures" / "codex").glob("rollout-*.jsonl"))
LIVE_ID = "019e16b0-0000-7000-8000-0000000000e2"


def live_rollout(lines: list[str], keep: int) -> str:
    meta = json.loads(lines[0])
    meta["payload"]["id"] = LIVE_ID
    return "\n".join([json.dumps(meta), *lines[1:keep]]) + "\n"


def test_codex_archived_and_live_sessions_in_the_panel(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    codex = tmp_path / "no-codex"  # the e2e server's --codex-dir
    (codex / "archived_sessions").mkdir(parents=True)
    zst = codex / "archived_sessions" / f"{ROLLOUT.name}.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(ROLLOUT.read_bytes()))
    empty_claude = tmp_path / "empty-claude"
    empty_claude.mkdir()
    server = server_factory(claude=empty_claude)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator("#ws-select option[value='']")).to_contain_text("naya")
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=user]").first).to_contain_text(
        "analyze trascript and summarzie action items", timeout=15_000
    )
    shell = feed.locator(".tool.kind-execute").first
    expect(shell.locator(".tool-input")).to_contain_text("sed -n '1,220p'")
    expect(shell.locator(".tool-output")).to_contain_text("name: using-superpowers")
    calls = [json.loads(line)["payload"] for line in ROLLOUT.read_text().splitlines()]
    calls = [c for c in calls if c.get("type") == "function_call"]
    expect(feed.locator("[data-type=tool_use]")).to_have_count(len(calls))
    expect(feed.locator("[data-type=assistant]").last).to_contain_text(
        "I couldn’t directly inspect your already-open Chrome tab"
    )
    expect(feed.locator("[data-type=system]", has_text="Unrecognized")).to_have_count(0)

    # A new rollout, written live: the panel follows it; the user interrupts the turn.
    lines = ROLLOUT.read_text().splitlines()
    day = codex / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    live = day / f"rollout-2026-05-11T14-00-00-{LIVE_ID}.jsonl"
    live.write_text(live_rollout(lines, 8))
    written = [json.loads(line)["payload"] for line in lines[1:8]]
    live_calls = sum(p.get("type") == "function_call" for p in written)
    expect(feed.locator("[data-type=tool_use]")).to_have_count(live_calls, timeout=15_000)
    expect(feed.locator("[data-type=turn_complete]")).to_have_count(0)
    aborted = {"type": "turn_aborted", "turn_id": "t-live", "reason": "interrupted"}
    record = {"timestamp": "2026-05-11T11:00:00.000Z", "type": "event_msg", "payload": aborted}
    with live.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    turn = feed.locator("[data-type=turn_complete]").last
    expect(turn.locator(".turn-status")).to_have_text("stopped")  # "interrupted" goes unsaid
