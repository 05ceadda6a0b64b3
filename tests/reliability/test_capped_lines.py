"""Huge lines are capped, never dropped: a 9.6 MB tool result and a 10 MB assistant reply,
appended to a live transcript while the real server tails it, reach the stream as cut items
(`truncated`, `full_length` of the whole text, `line_bytes`), the turn closes with its tokens and
cost, `/health` says which lines were cut and where, and the server's peak memory grows by far
less than one such line.

The lines are real: the last tool result and the final reply of a recorded Claude Code session
(tests/fixtures/claude/sample-project), their text enlarged. Before the cap read lines in pieces,
both vanished: the tool card had no result, the turn never closed, only a counter moved.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import time
from pathlib import Path

import psutil

from tests.harness.server import Server
from tests.harness.waiting import until, wait_until
from tests.reliability.harness import CLAUDE_FIX, Mirror

from .report import record
from .test_crash_restart import ws_id

SESSION = CLAUDE_FIX / "sample-project" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
LINES = SESSION.read_bytes().splitlines(keepends=True)
RESULT, REPLY = 20, 28  # a Bash result (a directory listing) and the end_turn reply
WRITE_BYTES = 1 << 20  # a writer flushing a huge line in pieces: the server sees it partial


def _enlarge(n: int, path: list[str | int], size: int) -> tuple[bytes, int]:
    """Line `n` with the text at `path` grown until the line has `size` bytes; and the length
    of that text (characters), which the item's `full_length` must say."""
    rec = json.loads(LINES[n])
    holder = rec
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += "\n-rw-r--r--  1 dev staff  4096 report.txt" * (size // 42)
    return json.dumps(rec, ensure_ascii=False).encode() + b"\n", len(holder[path[-1]])


def _server_with_the_session_head(tmp_path: Path) -> tuple[Server, Path, str, str]:
    """A server, not started yet, whose Claude folder holds the recorded session up to the tool
    result: with the transcript's path, and the ids of its workspace and session."""
    server = Server(tmp_path)
    project = server.claude / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / SESSION.name
    path.write_bytes(b"".join(LINES[:RESULT]))
    return server, path, ws_id("/path/to/Demo"), SESSION.stem


def _peak_rss(server: Server) -> int:
    """The process's peak resident size so far (VmHWM), in bytes."""
    assert server.proc is not None
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kib) * 1024


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        for pos in range(0, len(data), WRITE_BYTES):
            fh.write(data[pos : pos + WRITE_BYTES])
            fh.flush()


async def test_huge_lines_are_cut_and_the_turn_closes_with_its_cost(tmp_path: Path) -> None:
    result_line, result_chars = _enlarge(RESULT, ["message", "content", 0, "content"], 9_600_000)
    reply_line, reply_chars = _enlarge(REPLY, ["message", "content", 0, "text"], 10_000_000)
    server, path, ws, sid = _server_with_the_session_head(tmp_path)
    stop = asyncio.Event()
    mirror = Mirror(server, f"/workspace/{ws}/session/stream?session={sid}&limit=10000")
    task = None
    try:
        server.start()
        wait_until(lambda: server.snapshot(ws, sid)["total"] > 0, 20, "session indexed")
        task = asyncio.create_task(mirror.run(stop))
        assert await until(lambda: mirror.connects > 0, 10, step=0.05)
        rss_before = server.rss()
        t0 = time.monotonic()
        offsets = [path.stat().st_size]
        _append(path, result_line)
        _append(path, b"".join(LINES[RESULT + 1 : REPLY]))
        offsets.append(path.stat().st_size)
        _append(path, reply_line)

        async def closed() -> bool:
            return any(i["type"] == "turn_complete" for i in mirror.items[-1:])

        assert await until(closed, 60), [i["type"] for i in mirror.items[-5:]]
        seconds = time.monotonic() - t0
        peak_growth = _peak_rss(server) - rss_before
        items = mirror.items
        health = server.health()
        full = {
            i["type"]: server.get(f"/workspace/{ws}/session/items/{i['id']}?session={sid}")
            for i in items
            if "line_bytes" in i
        }
    finally:
        stop.set()
        if task is not None:
            await asyncio.wait_for(task, 10)
        server.stop()

    cut = [i for i in items if "line_bytes" in i]
    assert [(i["type"], i["line_bytes"]) for i in cut] == [
        ("tool_result", len(result_line) - 1),
        ("assistant", len(reply_line) - 1),
    ]
    result, reply = cut
    assert result["truncated_output"] and result["full_length"] == result_chars
    assert result["name"] == "Bash" and result["output"].startswith("total 0")
    assert reply["truncated"] and reply["full_length"] == reply_chars
    # "Show more" gives the head the server kept, and still says how long the text was.
    assert full["assistant"]["full_length"] == reply_chars and full["assistant"]["truncated"]
    assert 60_000 < len(full["assistant"]["content"]) <= 65_536
    assert len(full["tool_result"]["output"]) <= 65_536
    # The turn closes after the reply with what the reply's usage says (the usage is real).
    done = items[-1]
    assert items[-2]["id"] == reply["id"] and done["type"] == "turn_complete"
    assert done["status"] == "ok" and done["output_tokens"] > 0 and done["cost_usd"] > 0
    assert done["model"] == "claude-sonnet-4-20250514"
    details = [(d["offset"], d["reason"]) for d in health["parse_errors_detail"]]
    assert details == [
        (offsets[1], f"line of {(len(reply_line) - 1) / 1e6:.1f} MB capped"),
        (offsets[0], f"line of {(len(result_line) - 1) / 1e6:.1f} MB capped"),
    ]
    record(
        "huge lines (9.6 MB tool result, 10 MB reply) appended live",
        {
            "cut_items": 2,
            "turn_closed": True,
            "seconds_to_turn_complete": round(seconds, 2),
            "rss_growth": peak_growth,
            "rss_growth_mib": round(peak_growth / 2**20, 1),
        },
        trials=1,
    )
    assert peak_growth < 8 << 20, f"peak RSS grew {peak_growth / 2**20:.1f} MiB"


async def test_sigterm_while_a_huge_line_is_read_exits_within_two_seconds(tmp_path: Path) -> None:
    """No thread holds shutdown: SIGTERM while a worker thread reads a 400 MB line (about 4 s of
    work) stops the server within 2 s; the line is read again, whole, by the next start."""
    server, path, ws, sid = _server_with_the_session_head(tmp_path)
    server.start()
    try:
        wait_until(lambda: server.snapshot(ws, sid)["total"] > 0, 20, "session loaded")
        assert server.proc is not None
        proc = psutil.Process(server.proc.pid)
        head = b'{"type":"user","message":{"role":"user","content":"'
        with path.open("ab") as fh:
            fh.write(head)
            for _ in range(400):
                fh.write(b"x " * (WRITE_BYTES // 2))
            fh.write(b'"},"timestamp":"2026-01-01T00:00:00.000Z"}\n')
        read_before = proc.io_counters().read_chars
        # The server is inside the line (it has read 40 MB of it since its newline arrived).
        wait_until(lambda: proc.io_counters().read_chars > read_before + 40_000_000, 30, "reading")
        t0 = time.monotonic()
        seconds = float("inf")  # if it does not stop at all
        server.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.proc.wait(20)
            seconds = time.monotonic() - t0
        assert server.proc.returncode == 0
        server.start()  # nothing was lost: the line is read by the next start

        def cut_prompt() -> bool:
            items = server.snapshot(ws, sid)["items"]
            return any(i["type"] == "user" and i.get("line_bytes") for i in items)

        wait_until(cut_prompt, 90, "the 400 MB prompt, cut")
    finally:
        server.stop()
    record("SIGTERM while a 400 MB line is read", {"sigterm_exit_s": round(seconds, 2)}, trials=1)
    assert seconds <= 2.0, f"SIGTERM took {seconds:.2f}s"
