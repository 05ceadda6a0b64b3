"""No stalls: while one request ingests 100,000 small lines and SSE clients stream the session,
`/health` keeps answering quickly. Before ingest was applied in slices that yield to the event
loop, the body was applied a chunk at a time and `/health` waited seconds.

The figure is `/health` latency p99 (one request every 20 ms); the target is 50 ms on an idle
machine, and the bound asserted holds on a loaded 2-core one. The fast run streams to 10
clients; the soak run (`-m soak`) to 50, which takes about a minute: every item goes to every
client, and they all parse it.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.harness.auth import NDJSON
from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server
from tests.reliability.harness import load_clients

from .report import record
from .test_crash_restart import ws_id

WS_DIR = "/home/dev/stall"
SESSION = "stall"
LINES = 100_000
# Bounds that hold on a 2-core machine loaded by other work (there p99 reached 500 ms while the
# loop itself never spent more than ~30 ms an iteration). Before the fix: p50 3.2 s, p99 5.2 s.
P50_BOUND_MS = 250.0
P99_BOUND_MS = 1000.0


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def _probe(server: Server, stop: asyncio.Event, latencies: list[float]) -> None:
    """GET /health every 20 ms until `stop`, recording each answer's latency (ms)."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        while not stop.is_set():
            t0 = time.monotonic()
            async with http.get(server.url("/health")) as resp:
                assert resp.status == 200
                await resp.read()
            latencies.append((time.monotonic() - t0) * 1000)
            await asyncio.sleep(0.02)


async def _ingest(server: Server, lines: int) -> dict[str, Any]:
    body = b"".join(
        json.dumps({"type": "assistant", "content": f"line {n}"}).encode() + b"\n"
        for n in range(lines)
    )
    url = server.url(f"/api/ingest?workspace={WS_DIR}&format=events&session={SESSION}")
    timeout = aiohttp.ClientTimeout(total=600)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        http.post(url, data=body, headers=NDJSON) as resp,
    ):
        assert resp.status == 200, await resp.text()
        result: dict[str, Any] = await resp.json()
        return result


async def test_health_stays_fast_while_100k_lines_are_ingested(tmp_path: Path) -> None:
    await _stall_run(tmp_path, clients=10)


@pytest.mark.soak
async def test_soak_health_while_100k_lines_are_ingested_to_50_clients(tmp_path: Path) -> None:
    await _stall_run(tmp_path, clients=50)


async def _stall_run(tmp_path: Path, clients: int) -> None:
    server = Server(tmp_path)
    server.start()
    try:
        server.ingest(WS_DIR, SESSION, [{"type": "user", "content": "start"}])
        path = f"/workspace/{ws_id(WS_DIR)}/session/stream?session={SESSION}"
        async with load_clients(server, path, clients) as readers:
            latencies: list[float] = []
            stop = asyncio.Event()
            prober = asyncio.create_task(_probe(server, stop, latencies))
            t0 = time.monotonic()
            result = await _ingest(server, LINES)
            ingest_s = time.monotonic() - t0
            stop.set()
            await prober
            summary = await readers.summary(LINES + 1, 300)
            log = server.stderr()
    finally:
        server.stop()
    figures = {
        "lines": LINES,
        "clients": clients,
        "ingest_s": round(ingest_s, 2),
        "health_samples": len(latencies),
        "health_p50_ms": round(_percentile(latencies, 0.5), 1),
        "health_p99_ms": round(_percentile(latencies, 0.99), 1),
        "health_max_ms": round(max(latencies), 1),
        "clients_complete": summary["complete"],
        "client_resets": summary["resets"],
        "out_of_order": summary["bad_order"],
    }
    record(f"stall: /health while 100,000 lines are ingested, {clients} SSE clients", figures,
           trials=1)  # fmt: skip
    assert result["accepted"] == LINES and result["rejected"] == 0, result
    assert figures["health_p50_ms"] <= P50_BOUND_MS, figures
    assert figures["health_p99_ms"] <= P99_BOUND_MS, figures
    assert summary["complete"] == clients and summary["bad_order"] == 0, figures
    assert not unexpected_tracebacks(log), log[-3000:]
