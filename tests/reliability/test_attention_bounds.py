"""Hook events with huge fields cannot grow the server for good or stall it: 200 events with a
1 MB `cwd` (each a new session) against a real server. Before the attention board was bounded
they added ~195 MB of RSS that never went away and stalled every request for seconds."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

from tests.harness.auth import AUTH
from tests.harness.server import Server

from .report import record

EVENTS = 200
CWD = "/" + "d" * 1_000_000
MAX_GROWTH = 40 * 2**20
MAX_LATENCY_S = 1.0


def post_hook(server: Server, body: bytes) -> None:
    req = urllib.request.Request(server.url("/api/hooks/claude"), data=body, method="POST",
                                 headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200


def test_huge_hook_fields_keep_memory_and_latency_small(tmp_path: Path) -> None:
    server = Server(tmp_path)
    server.start()
    latencies: list[float] = []
    stop = threading.Event()

    def ping() -> None:
        while not stop.is_set():
            started = time.monotonic()
            server.get("/api/attention", timeout=30)
            latencies.append(time.monotonic() - started)
            stop.wait(0.05)

    try:
        server.wait_settled()
        post_hook(server, json.dumps({"hook_event_name": "SessionStart", "session_id": "warm",
                                      "cwd": "/w"}).encode())  # fmt: skip
        before = server.rss()
        pinger = threading.Thread(target=ping)
        pinger.start()
        for n in range(EVENTS):
            event = {"hook_event_name": "UserPromptSubmit", "session_id": f"big-{n}", "cwd": CWD,
                     "prompt": "go"}  # fmt: skip
            post_hook(server, json.dumps(event).encode())
        stop.set()
        pinger.join(30)
        after = server.rss()
        rows = server.get("/api/attention")["sessions"]
    finally:
        stop.set()
        server.stop()
    growth = after - before
    assert growth < MAX_GROWTH, f"RSS grew {growth / 2**20:.1f} MiB"
    assert latencies and max(latencies) < MAX_LATENCY_S, sorted(latencies)[-5:]
    big = [r for r in rows if r["session"].startswith("big-")]
    assert len(big) == EVENTS, len(big)
    assert all(len(r["directory"]) <= 4096 and r["directory"].endswith("…") for r in big)
    record("attention board, 200 hook events with a 1 MB cwd",
           {"rss_before": before, "rss_after": after, "rss_growth": growth,
            "max_latency_ms": round(max(latencies) * 1000), "pings": len(latencies)},
           trials=EVENTS)  # fmt: skip
