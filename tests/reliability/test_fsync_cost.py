"""The fsync policy and its cost: one fsync per journal a request wrote (plus the directories new
with it), never one per line, run off the event loop before the answer.

Measured in-process on the data dir's real file system: a bare fsync of a small append, and the
mean latency of ingest requests of 1 and of 100 lines with the fsync and with it skipped, taken
in alternating rounds so that the machine's load weighs on both alike.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app
from sidemirror.core.durable import AppendFile

from tests.harness.auth import NDJSON, TOKEN
from tests.server.support import make_settings

from .report import record

ROUNDS = 10
PER_ROUND = {1: 20, 100: 5}  # lines per request: requests per round and mode


async def _post(client: TestClient[Any, Any], lines: int) -> None:
    body = "".join(json.dumps({"type": "assistant", "content": f"line {k}"}) + "\n"
                   for k in range(lines))  # fmt: skip
    resp = await client.post("/api/ingest", params={"workspace": "/home/dev/fsync",
                             "session": f"s{lines}"}, data=body, headers=NDJSON)  # fmt: skip
    assert resp.status == 200, await resp.text()


def _bare_fsync_ms(directory: Path, samples: int = 200) -> list[float]:
    fd = os.open(directory / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    out = []
    try:
        for _ in range(samples):
            os.write(fd, b"x" * 100 + b"\n")
            t0 = time.perf_counter()
            os.fsync(fd)
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        os.close(fd)
    return sorted(out)


async def test_one_fsync_per_request_and_what_it_costs(
    aiohttp_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await aiohttp_client(create_app(make_settings(tmp_path), TOKEN))
    for lines in (*PER_ROUND, 1000):
        await _post(client, lines)  # each session's file and directory exist from here on
    fsyncs: list[int] = []
    real_fsync, real_sync = os.fsync, AppendFile.sync

    def counting(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    async def no_sync(self: AppendFile) -> None:
        return None

    monkeypatch.setattr(os, "fsync", counting)
    await _post(client, 1000)
    per_request = len(fsyncs)
    total = {(lines, mode): 0.0 for lines in PER_ROUND for mode in ("fsync", "none")}
    for _ in range(ROUNDS):
        for mode in ("fsync", "none"):
            monkeypatch.setattr(AppendFile, "sync", real_sync if mode == "fsync" else no_sync)
            for lines, count in PER_ROUND.items():
                t0 = time.perf_counter()
                for _ in range(count):
                    await _post(client, lines)
                total[(lines, mode)] += time.perf_counter() - t0
    mean = {k: v / (ROUNDS * PER_ROUND[k[0]]) * 1000 for k, v in total.items()}
    bare = _bare_fsync_ms(tmp_path)
    figures = {
        "fsyncs_per_request_of_1000_lines": per_request,
        "bare_fsync_p50_ms": round(bare[len(bare) // 2], 2),
        "bare_fsync_p99_ms": round(bare[int(len(bare) * 0.99)], 2),
        **{f"request_{n}_lines_{mode}_ms": round(v, 2) for (n, mode), v in mean.items()},
    }
    record("fsync cost: ingest requests on the data dir's file system", figures, trials=1)
    assert per_request == 1, figures  # one per journal written, not one per line
