"""The Session tab against a real server reading a real Claude Code transcript."""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.e2e.support import (
    FIXTURES,
    SAMPLE_SESSION,
    append_exchange,
    assert_matches_server,
    log_order,
    open_session,
    rendered_ids,
    sample_workspace,
    session_list,
    transcript,
    watch_console,
)
from tests.harness import paths
from tests.harness.browser import Extension
from tests.harness.paths import FIXTURES as SOURCE_FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.transcripts import write_long_session

SHOTS = paths.SHOTS / "session"


def test_renders_real_transcript_and_live_append(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = open_session(ext, server)
    feed = panel.locator(".feed")
    # Tool cards with their names and kinds, results attached with ✓/✗.
    for name in ("Bash", "Glob", "Write"):
        expect(feed.locator(".tool-name", has_text=re.compile(f"^{name}$")).first).to_be_visible()
    expect(feed.locator(".tool.kind-execute").first).to_be_visible()
    # TodoWrite arrives as a plan item: a checklist.
    expect(feed.locator("[data-type=plan] .plan-entry").first).to_be_visible()
    expect(feed.locator(".tool.kind-search").first).to_be_visible()
    bash = feed.locator(".tool.kind-execute").first
    expect(bash.locator(".tool-input")).to_contain_text("find .")
    expect(bash.locator(".tool-status")).to_have_attribute(
        "aria-label", re.compile("^(Succeeded|Failed)")
    )
    ls = feed.locator(".tool.kind-execute", has_text="ls -la")
    expect(ls.locator(".tool-status.ok .mark")).to_have_text("✓")
    expect(ls.locator(".tool-output")).to_contain_text("total 0")
    write = feed.locator(".tool.kind-write")
    expect(write.locator(".tool-status.error .mark")).to_have_text("✗")
    expect(write.locator(".tool-output")).to_contain_text("requested permissions")
    # The prompt and the closing turn boundary with tokens and an (estimated) cost.
    expect(feed.locator("[data-type=user]").first).to_have_text(re.compile(r"You.*/init"))
    turn = feed.locator("[data-type=turn_complete]").last
    expect(turn.locator(".turn-label")).to_have_text(re.compile(r"^Turn \d+$"))
    expect(turn.locator(".turn-tokens")).to_contain_text(" in · ")
    expect(turn.locator(".turn-cost")).to_have_text(re.compile(r"^≈?\$\d+\.\d+$"))
    if "estimated" in (turn.locator(".turn-cost").get_attribute("class") or ""):
        expect(turn.locator(".turn-cost")).to_have_text(re.compile("^≈"))
    before = assert_matches_server(panel, server)

    # A line appended to the transcript shows up live, at the bottom, without a reload.
    append_exchange(
        transcript(claude_dir), "One more thing: add a LICENSE", "Added an MIT LICENSE file."
    )
    expect(
        feed.locator("[data-type=assistant]", has_text="Added an MIT LICENSE file.")
    ).to_be_visible(timeout=10_000)
    expect(
        feed.locator("[data-type=user]", has_text="One more thing: add a LICENSE")
    ).to_be_visible()
    after = assert_matches_server(panel, server)
    assert after[: len(before)] == before
    assert (
        panel.locator(".scroller").evaluate("s => s.scrollHeight - s.scrollTop - s.clientHeight")
        < 60
    )


def test_new_activity_pill_when_scrolled_up(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = open_session(ext, server)
    panel.locator(".scroller").evaluate("s => { s.scrollTop = 0; }")
    append_exchange(transcript(claude_dir), "Scrolled-up prompt", "Reply while scrolled up.")
    pill = panel.locator(".pill")
    expect(pill).to_be_visible(timeout=10_000)
    expect(pill).to_contain_text("new item")
    assert panel.locator(".scroller").evaluate("s => s.scrollTop") == 0  # did not jump
    pill.click()
    expect(pill).to_be_hidden()
    expect(panel.get_by_text("Reply while scrolled up.")).to_be_in_viewport()


def test_server_restart_resumes_without_duplicates_or_gaps(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = open_session(ext, server)
    warnings = watch_console(panel, ("warning",))
    before = assert_matches_server(panel, server)

    server.stop()
    banner = panel.locator(".banner.reconnecting")
    expect(banner).to_be_visible(timeout=10_000)
    expect(banner).to_contain_text(re.compile("Reconnecting|reconnecting in"))
    # The agent keeps working while the server is down.
    append_exchange(
        transcript(claude_dir),
        "Prompt written while the server was down",
        "Answer written while down.",
    )

    server.start()
    retry = panel.get_by_role("button", name="Retry now")
    if retry.is_visible():  # skip the rest of the backoff wait, as a user would
        with contextlib.suppress(PlaywrightTimeoutError):
            retry.click(timeout=2_000)  # it may reconnect by itself (and hide it) first
    expect(banner).to_be_hidden(timeout=20_000)
    expect(panel.get_by_text("Answer written while down.")).to_be_visible(timeout=10_000)
    after = assert_matches_server(panel, server)
    # No gap: every item of the server's log is rendered (assert_matches_server), in order.
    assert after[: len(before)] == before and len(after) > len(before)
    assert not [w for w in warnings if "duplicate" in w], warnings

    # And live updates keep flowing after the resume.
    append_exchange(transcript(claude_dir), "After restart", "Live again after restart.")
    expect(panel.get_by_text("Live again after restart.")).to_be_visible(timeout=10_000)
    assert_matches_server(panel, server)


def test_huge_transcript_opens_at_its_tail_and_offers_the_rest(
    ext: Extension, server_factory: Any, tmp_path: Path
) -> None:
    """A 34 MB session (a real one run again and again): the server reads it from its last
    prompt near the end, and the panel shows the newest items, offers the earlier ones, and
    stays live."""
    claude = tmp_path / "huge"
    path = claude / "-path-to-Demo" / f"{SAMPLE_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    real = FIXTURES / "claude" / "sample-project" / f"{SAMPLE_SESSION}.jsonl"
    write_long_session(path, real, 34 << 20)
    server = server_factory(claude=claude)
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=tool_use]").first).to_be_visible(timeout=15_000)

    shown = 500  # the panel's snapshot size (lib/page/session-stream.js)
    snap = server.snapshot(sample_workspace(server), SAMPLE_SESSION, limit=shown)
    # Read from its last prompt at least 256 KB before the end: a few hundred items held.
    assert 0 < snap["skipped_bytes"] < path.stat().st_size - (256 << 10)
    assert 200 <= snap["total"] == len(snap["items"]) <= shown
    # The part before is there to page back to (history): the panel fetched the page just
    # before its snapshot and offers the rest.
    earlier = panel.locator(".earlier")
    expect(earlier.get_by_role("button", name="Load earlier")).to_be_visible(timeout=20_000)

    latest = [i["id"] for i in snap["items"]]
    wait_until(lambda: log_order(panel)[-len(latest) :] == latest, timeout=20)
    ids = rendered_ids(panel)
    assert len(ids) == len(set(ids)) > len(latest)  # earlier pages came in, none twice
    # Turns before the part read were not counted: the boundary says "Turn", not a guess.
    expect(feed.locator("[data-type=turn_complete] .turn-label").last).to_have_text("Turn")

    append_exchange(path, "Still live at 34 MB?", "Yes: appended and shown.")
    expect(
        feed.locator("[data-type=assistant]", has_text="Yes: appended and shown.")
    ).to_be_visible(timeout=10_000)


def append_lines(path: Path, records: list[dict[str, Any]]) -> None:
    """Append Claude Code records shaped like the transcript's own (its common fields)."""
    last = json.loads(path.read_text().splitlines()[-1])
    common = {k: last[k] for k in ("userType", "cwd", "sessionId", "version", "gitBranch")}
    with path.open("a") as fh:
        for record in records:
            fh.write(json.dumps({**common, **record}) + "\n")


def test_queued_message_one_compaction_and_an_unplaced_sub_agent(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    """Appended live: a message typed while a tool ran (Claude Code records it only as
    queue-operation lines), an inline sub-agent thread no Task claims, and a compaction."""
    panel = open_session(ext, server)
    feed = panel.locator(".feed")
    path = transcript(claude_dir)
    parent = json.loads(path.read_text().splitlines()[-1])["uuid"]
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    ids = [str(uuid.uuid4()) for _ in range(8)]
    tool = "toolu_e2e_queued_bash"
    model = "claude-sonnet-4-20250514"

    def assistant(n: int, content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
        message = {"id": f"msg_e2e_{n}", "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop,
                   "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
        return {"type": "assistant", "message": message, "requestId": f"req_e2e_{n}"}

    append_lines(path, [
        {"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": ids[0],
         "timestamp": now, "message": {"role": "user", "content": "Run the test suite"}},
        {**assistant(1, [{"type": "tool_use", "id": tool, "name": "Bash",
                          "input": {"command": "pytest -q"}}], "tool_use"),
         "parentUuid": ids[0], "isSidechain": False, "uuid": ids[1], "timestamp": now},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": now,
         "content": "also update the README when done"},
        {"type": "queue-operation", "operation": "remove", "timestamp": now},
        {"parentUuid": ids[1], "isSidechain": False, "type": "user", "uuid": ids[2],
         "timestamp": now, "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": tool, "content": "12 passed"}]}},
        {"parentUuid": None, "isSidechain": True, "type": "user", "uuid": ids[3],
         "timestamp": now, "message": {"role": "user", "content": "Survey the modules"}},
        {**assistant(2, [{"type": "text", "text": "Found three modules"}], "end_turn"),
         "parentUuid": ids[3], "isSidechain": True, "uuid": ids[4], "timestamp": now},
        {**assistant(3, [{"type": "text", "text": "All 12 tests pass."}], "end_turn"),
         "parentUuid": ids[2], "isSidechain": False, "uuid": ids[5], "timestamp": now},
        {"parentUuid": None, "logicalParentUuid": ids[5], "isSidechain": False,
         "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
         "isMeta": False, "level": "info", "uuid": ids[6], "timestamp": now,
         "compactMetadata": {"trigger": "manual", "preTokens": 48210}},
        {"parentUuid": ids[6], "isSidechain": False, "type": "user", "uuid": ids[7],
         "timestamp": now, "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
         "message": {"role": "user", "content": "Summary: the tests were run and all pass."}},
    ])  # fmt: skip

    # The queued message, where the model read it, marked as sent while the agent worked.
    queued = feed.locator("[data-type=user]", has_text="also update the README when done")
    expect(queued).to_have_count(1, timeout=15_000)
    expect(queued.locator(".queued-mark")).to_have_text("sent while working")
    expect(feed.locator("[data-type=user]", has_text="Run the test suite")).to_be_visible()
    expect(feed.locator("[data-type=user]", has_text="Run the test suite").locator(
        ".queued-mark")).to_have_count(0)  # fmt: skip

    # The sub-agent thread no Task claims, under a visible group of its own.
    group = feed.locator("[data-type=tool_use]", has_text="Unplaced sub-agent")
    expect(group).to_have_count(1)
    expect(group.locator(".subagent-items")).to_contain_text("Found three modules")
    expect(group.locator(".subagent-items")).to_contain_text("Survey the modules")

    # One compaction, one row, its summary inside.
    compact = feed.locator(".compact")
    expect(compact).to_have_count(1)
    expect(compact.locator("summary")).to_have_text("Context compacted")
    compact.locator("summary").click()
    expect(compact).to_contain_text("manual, 48210 tokens before")
    expect(compact).to_contain_text("Summary: the tests were run and all pass.")
    assert_matches_server(panel, server)


def test_sessions_titled_alike_are_told_apart_in_the_list(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    panel = open_session(ext, server)
    # The same first prompt in another session of the workspace, a day earlier.
    other = "0b1d2e3f-aaaa-4bbb-8ccc-123456789abc"
    lines = []
    for line in transcript(claude_dir).read_text().splitlines():
        record = json.loads(line)
        if "sessionId" in record:
            record["sessionId"] = other
        if isinstance(record.get("timestamp"), str):
            record["timestamp"] = "2025-08-01" + record["timestamp"][10:]
        lines.append(json.dumps(record))
    (transcript(claude_dir).parent / f"{other}.jsonl").write_text("\n".join(lines) + "\n")
    ws = sample_workspace(server)
    wait_until(
        lambda: other in {s["id"] for s in server.get(f"/workspace/{ws}/sessions")["sessions"]},
        30,
        what="the second /init session listed",
    )

    # Each row of the list says when its session started, and its short id.
    dialog = session_list(panel)
    dialog.get_by_role("combobox").fill("/init")
    alike = dialog.locator(".sl-session", has=panel.locator(".sl-title", has_text="/init"))
    expect(alike).to_have_count(2, timeout=15_000)
    ids = {alike.nth(i).locator(".sl-id").text_content() for i in range(2)}
    assert ids == {SAMPLE_SESSION[:8], other[:8]}
    facts = [alike.nth(i).locator(".sl-facts").text_content() or "" for i in range(2)]
    assert len({f.split(" · ")[1] for f in facts}) == 2, facts  # their start times differ


def test_a_turn_shows_the_agents_own_duration_once_it_comes(
    ext: Extension, server: Server, claude_dir: Path
) -> None:
    """A turn closes at its `end_turn` (shown at once, with the wall time from its prompt);
    Claude Code's `turn_duration` record, written after it, puts the agent's own figure on it."""
    panel = open_session(ext, server)
    path = transcript(claude_dir)
    parent = json.loads(path.read_text().splitlines()[-1])["uuid"]

    def stamp(ago: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - ago))

    ids = [str(uuid.uuid4()) for _ in range(3)]
    reply = {"id": "msg_e2e_timed", "type": "message", "role": "assistant",
             "model": "claude-sonnet-4-20250514", "stop_reason": "end_turn",
             "content": [{"type": "text", "text": "Timed reply done."}],
             "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
    append_lines(path, [
        {"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": ids[0],
         "timestamp": stamp(20), "message": {"role": "user", "content": "Time this turn"}},
        {"parentUuid": ids[0], "isSidechain": False, "type": "assistant", "uuid": ids[1],
         "timestamp": stamp(8), "message": reply, "requestId": "req_e2e_timed"},
    ])  # fmt: skip
    turn = panel.locator(".feed [data-type=turn_complete]").last
    expect(turn.locator(".turn-dur")).to_have_text("12 s", timeout=15_000)  # to end_turn

    # Real-format record (turn-2's, Claude Code 2.1.7), with this turn's figure.
    fixture = SOURCE_FIXTURES / "claude" / "incremental-subagents" / "turn-2.jsonl"
    (recorded,) = [r for r in map(json.loads, fixture.read_text().splitlines())
                   if r.get("subtype") == "turn_duration"]  # fmt: skip
    own = {k: v for k, v in recorded.items() if k not in ("cwd", "sessionId", "gitBranch")}
    append_lines(path, [{**own, "parentUuid": ids[1], "uuid": ids[2], "timestamp": stamp(7),
                         "durationMs": 9400}])  # fmt: skip
    expect(turn.locator(".turn-dur")).to_have_text("9.4 s", timeout=15_000)
    expect(panel.locator(".feed [data-type=turn_duration]")).to_have_count(0)  # not a row
    SHOTS.mkdir(parents=True, exist_ok=True)
    turn.screenshot(path=str(SHOTS / "turn-own-duration.png"))
