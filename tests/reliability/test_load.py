"""Load: 50 SSE clients on one session while events are ingested at 2,000/s, with one stalled
client that never reads. The others must receive everything, in order, without a reset; the
server's RSS is measured, and the delivery latency (ingest sent -> client parsed) reported."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.harness.auth import NDJSON, TOKEN
from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server
from tests.reliability.harness import load_clients

from .report import record
from .test_crash_restart import ws_id

WS_DIR = "/home/dev/load"
SESSION = "load"


async def _produce(server: Server, seconds: float, rate: int) -> int:
    """`rate` events/s in 20 batches a second, paced to the wall clock."""
    per_batch = rate // 20
    sent = 0
    url = server.url(f"/api/ingest?workspace={WS_DIR}&format=events&session={SESSION}")
    t0 = time.monotonic()
    async with aiohttp.ClientSession() as http:
        batch_no = 0
        while time.monotonic() - t0 < seconds:
            now = time.time()
            body = "".join(
                json.dumps({"type": "assistant", "content": f"load {sent + k} {now:.6f}"}) + "\n"
                for k in range(per_batch)
            )
            async with http.post(url, data=body, headers=NDJSON) as resp:
                assert resp.status == 200, await resp.text()
                assert (await resp.json())["accepted"] == per_batch
            sent += per_batch
            batch_no += 1
            await asyncio.sleep(max(0.0, t0 + batch_no / 20 - time.monotonic()))
    return sent


def _stalled_client(server: Server) -> socket.socket:
    """Opens the stream and never reads: its socket buffers fill and the server must cope."""
    s = socket.create_connection(("127.0.0.1", server.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    path = f"/workspace/{ws_id(WS_DIR)}/session/stream?session={SESSION}"
    s.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {TOKEN}"
        "\r\n\r\n".encode()
    )
    return s


async def load_run(tmp: Path, *, seconds: float, rate: int, clients: int = 50) -> dict[str, Any]:
    server = Server(tmp)
    server.start()
    stalled: socket.socket | None = None
    try:
        server.ingest(WS_DIR, SESSION, [{"type": "user", "content": "start"}])
        path = f"/workspace/{ws_id(WS_DIR)}/session/stream?session={SESSION}&limit=10000"
        async with load_clients(server, path, clients) as readers:
            stalled = _stalled_client(server)
            await asyncio.sleep(0.2)
            rss_before = server.rss()
            rss_samples = [rss_before]
            sampler_stop = asyncio.Event()

            async def sample() -> None:
                while not sampler_stop.is_set():
                    await asyncio.sleep(1.0)
                    rss_samples.append(server.rss())

            sampler = asyncio.create_task(sample())
            t0 = time.monotonic()
            sent = await _produce(server, seconds, rate)
            produce_s = time.monotonic() - t0
            total = sent + 1
            summary = await readers.summary(total, 150)
            sampler_stop.set()
            await sampler
            rss_after = server.rss()
            health = server.health()
            alive = server.alive()
            log = server.stderr()
    finally:
        if stalled is not None:
            stalled.close()
        server.stop()
    result = {
        "clients": clients,
        "stalled_clients": 1,
        "events": sent,
        "achieved_rate": round(sent / produce_s),
        "delivered_all": summary["complete"] == clients,
        "lost": max(0, total - summary["min_last"]),
        "out_of_order": summary["bad_order"],
        "resets": summary["resets"],
        "p50_ms": summary["p50_ms"],
        "p99_ms": summary["p99_ms"],
        "max_ms": summary["max_ms"],
        "rss_before": rss_before,
        "rss_after": rss_after,
        "rss_max": max(rss_samples),
        "rss_per_event": round((rss_after - rss_before) / max(1, sent)),
        "crashes": 0 if alive else 1,
        "seconds": seconds,
    }
    record(f"load: 50 SSE clients + 1 stalled, {rate:,} events/s, {seconds:g} s", result, trials=1)
    assert alive and health["status"] == "ok", result
    assert result["delivered_all"] and result["lost"] == 0, result
    assert result["out_of_order"] == 0, result  # no duplicate, gap or reordering
    assert result["resets"] == 0, result  # healthy clients never overflow
    assert not unexpected_tracebacks(log), log[-3000:]
    return result


async def test_fifty_clients_at_2000_events_per_second(tmp_path: Path) -> None:
    result = await load_run(tmp_path, seconds=3.0, rate=2000)
    # Stored items cost memory by design (the log is in memory); beyond that nothing may grow.
    assert result["rss_after"] - result["rss_before"] < 60 << 20, result
    # The producer's rate is a figure (recorded above), not a verdict: on a loaded 2-core machine
    # it falls well below 2,000/s. What must hold is that it was a real load while every
    # client still got every event, in order, with no reset.
    assert result["achieved_rate"] >= 300, result


@pytest.mark.soak
@pytest.mark.parametrize("seconds", [60, 600])
async def test_soak_load(tmp_path: Path, seconds: int) -> None:
    await load_run(tmp_path, seconds=seconds, rate=2000)
