"""Codex sessions in the real panel: an archived, compressed rollout renders as its plain twin
would, and a live rollout interrupted by the user closes its turn as stopped.

Both are the recorded Codex Desktop rollout in tests/fixtures/codex/ (the second under a new
session id, cut after its first tool calls); the `turn_aborted` appended live is in the shape
Codex writes it (tests/fixtures/NOTICE.md). In the live one, the shapes no recording holds are
built from its own lines with fields changed (as in tests/server/sources/codex/
test_commands.py): the first command's output says it is still running, its
`exec_command_end` and a failed one for the second command come later, and a `write_stdin` call
is the recorded `wc -l` call renamed with `write_stdin` arguments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import zstandard
from playwright.sync_api import expect

from tests.e2e.support import SHOWN
from tests.harness.browser import Extension
from tests.harness.paths import ROOT

ROLLOUT = next((ROOT / "tests" / "fixtures" / "codex").glob("rollout-*.jsonl"))
LIVE_ID = "019e16b0-0000-7000-8000-0000000000e2"


def live_rollout(lines: list[str], keep: int) -> str:
    meta = json.loads(lines[0])
    meta["payload"]["id"] = LIVE_ID
    still_running = json.loads(lines[4])  # the first command's output, still running at 1 s
    still_running["payload"]["output"] = (
        "Chunk ID: bd7d7c\nWall time: 1.0012 seconds\nProcess running with session ID 41730\n"
        "Original token count: 0\nOutput:\n"
    )
    return (
        "\n".join([json.dumps(meta), *lines[1:4], json.dumps(still_running), *lines[5:keep]]) + "\n"
    )


def command_end(call: dict[str, Any], code: int, secs: int, output: str) -> dict[str, Any]:
    end = {
        "type": "exec_command_end",
        "call_id": call["call_id"],
        "command": ["/bin/zsh", "-lc", json.loads(call["arguments"])["cmd"]],
        "aggregated_output": output,
        "exit_code": code,
        "duration": {"secs": secs, "nanos": 300_000_000},
        "status": "completed" if code == 0 else "failed",
    }
    return {"timestamp": "2026-05-11T10:30:00.000Z", "type": "event_msg", "payload": end}


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
    expect(panel.locator(SHOWN)).to_contain_text("naya")
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
    # The first command still runs: its card waits, it does not read "✓ 1.0 s (no output)".
    sed, wc = feed.locator(".tool.kind-execute").nth(0), feed.locator(".tool.kind-execute").nth(1)
    expect(sed.locator(".tool-status")).to_have_attribute("aria-label", "Running")
    sed_call, wc_call = written[2], written[5]
    recorded = json.loads(lines[4])["payload"]["output"].partition("\nOutput:\n")[2]
    stdin = json.loads(lines[6])
    stdin["payload"].update(
        name="write_stdin",
        call_id="call_live_stdin",
        arguments=json.dumps({"session_id": 41730, "chars": "y\n", "yield_time_ms": 1000}),
    )
    ends = [command_end(sed_call, 0, 7, recorded), command_end(wc_call, 1, 0, "wc: no such file")]
    with live.open("a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in [*ends, stdin]))
    expect(sed.locator(".tool-status")).to_have_attribute("aria-label", "Succeeded in 7.3 s")
    expect(sed.locator(".tool-status .dur")).to_have_text("7.3 s")
    expect(sed.locator(".tool-output")).to_contain_text("name: using-superpowers")
    expect(wc).to_have_class(re.compile(r"\bfailed\b"))
    expect(wc.locator(".tool-status .mark")).to_have_text("✗")
    expect(wc.locator(".tool-output")).to_contain_text("Exit code 1\nwc: no such file")
    typed = feed.locator(".tool.kind-execute", has_text="write_stdin")
    expect(typed.locator(".tool-input")).to_have_text("y⏎")
    aborted = {"type": "turn_aborted", "turn_id": "t-live", "reason": "interrupted"}
    record = {"timestamp": "2026-05-11T11:00:00.000Z", "type": "event_msg", "payload": aborted}
    with live.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    turn = feed.locator("[data-type=turn_complete]").last
    expect(turn.locator(".turn-status")).to_have_text("stopped")  # "interrupted" goes unsaid


LOCALPUSH = (
    ROOT
    / "tests"
    / "fixtures"
    / "codex"
    / "localpush"
    / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
)


def test_a_codex_prompt_and_its_replies_show_once_and_context_is_not_a_prompt(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    # A real Codex Desktop rollout whose sanitiser gave each text's two copies (item and event)
    # different placeholders and stripped the tags off the injected context.
    records = [json.loads(line) for line in LOCALPUSH.read_text().splitlines()]
    day = tmp_path / "no-codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    (day / LOCALPUSH.name).write_bytes(LOCALPUSH.read_bytes())
    empty_claude = tmp_path / "empty-claude"
    empty_claude.mkdir()
    server = server_factory(claude=empty_claude)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=turn_complete]")).to_have_count(1, timeout=15_000)
    prompt = next(r for r in records if r["payload"].get("type") == "user_message")
    expect(feed.locator("[data-type=user]")).to_have_count(1)
    expect(feed.locator("[data-type=user]")).to_contain_text(prompt["payload"]["message"])
    replies = [r for r in records if r["payload"].get("type") == "agent_message"]
    expect(feed.locator("[data-type=assistant]")).to_have_count(len(replies))
    context = feed.locator("[data-type=system]", has_text="REDACTED_TEXT")
    expect(context).to_have_count(2)
    expect(context.locator(".who")).to_have_text(["Context", "Context"])
