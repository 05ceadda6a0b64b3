"""Load-test SSE clients, run in their own process so the producer and the server are not
starved by client-side parsing: `python -m tests.reliability.load_clients PORT PATH N`.

Each client checks every `id:` it receives is the next one (no loss, duplicate or reordering)
from the ids alone; client 0 also decodes each item to measure delivery latency. When a line
`TOTAL n` arrives on stdin, the process waits (bounded) until every client has item n, then
prints one JSON summary line and exits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import aiohttp

TOKEN_ENV = "SIDEMIRROR_TOKEN"


class Client:
    def __init__(self, n: int, measure: bool) -> None:
        self.n = n
        self.measure = measure
        self.last = 0
        self.received = 0
        self.bad_order = 0
        self.resets = 0
        self.latencies: list[float] = []

    def frame(self, raw: bytes) -> None:
        if raw.startswith(b"id: "):
            end = raw.index(b"\n")
            ident = raw[4:end]
            if b"event: snapshot" in raw:
                data = json.loads(raw[raw.index(b"data: ") + 6 :])
                self.last = int(ident.rsplit(b".", 1)[1]) if data["items"] else 0
                self.received += len(data["items"])
                return
            seq = int(ident.rsplit(b".", 1)[1])
            if seq != self.last + 1:
                self.bad_order += 1
            self.last = seq
            self.received += 1
            if self.measure:
                data = json.loads(raw[raw.index(b"data: ") + 6 :])
                content = data.get("content", "")
                if content.startswith("load "):
                    self.latencies.append(time.time() - float(content.rsplit(" ", 1)[1]))
        elif raw.startswith(b"event: reset"):
            self.resets += 1

    async def run(self, http: aiohttp.ClientSession, url: str, token: str,
                  stop: asyncio.Event) -> None:  # fmt: skip
        headers = {"Authorization": f"Bearer {token}"}
        async with http.get(url, headers=headers) as resp:
            buf = b""
            while not stop.is_set():
                chunk = await resp.content.readany()
                if not chunk:
                    return
                buf += chunk
                *frames, buf = buf.split(b"\n\n")
                for raw in frames:
                    self.frame(raw)


async def main(port: int, path: str, n: int, token: str) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}{path}"
    clients = [Client(i, i == 0) for i in range(n)]
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        tasks = [asyncio.create_task(c.run(http, url, token, stop)) for c in clients]
        loop = asyncio.get_running_loop()
        # Ready once every client has its snapshot.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(c.received for c in clients):
            await asyncio.sleep(0.02)
        print("READY", flush=True)
        line = await loop.run_in_executor(None, sys.stdin.readline)
        total = int(line.split()[1])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(c.last >= total for c in clients):
            await asyncio.sleep(0.05)
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    lat = sorted(x for c in clients for x in c.latencies)
    pick = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 1) if lat else None  # noqa: E731
    return {
        "complete": sum(c.last >= total for c in clients),
        "min_last": min(c.last for c in clients),
        "bad_order": sum(c.bad_order for c in clients),
        "resets": sum(c.resets for c in clients),
        "p50_ms": pick(0.5),
        "p99_ms": pick(0.99),
        "max_ms": pick(1.0),
    }


if __name__ == "__main__":
    import os

    port_, path_, n_ = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    print(json.dumps(asyncio.run(main(port_, path_, n_, os.environ[TOKEN_ENV]))), flush=True)
