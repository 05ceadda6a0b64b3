"""File faults under a live transcript: each one leaves the server running, is counted in
`/health` `parse_errors` when data had to be skipped, and the stream recovers (a client ends
with exactly the items of a fresh snapshot, which is exactly the transcript's items)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server
from tests.harness.waiting import until, wait_until
from tests.reliability.harness import MID_SESSION, Mirror, canon, fixture_lines

from .oracle import clean_parse
from .oracle import without_id as _no_id
from .report import record
from .test_crash_restart import ws_id

SPLIT = 20  # the transcript starts with this many lines; the rest is appended after the fault
PAUSE = 0.7  # longer than the watcher's 400 ms debounce: each step is seen on its own
LINES = fixture_lines(MID_SESSION)
SID = MID_SESSION.stem
CLAUDE_WS = ws_id("/path/to/Demo")


@dataclass
class Ctx:
    server: Server
    project: Path
    path: Path

    def append(self, data: bytes) -> None:
        with self.path.open("ab") as fh:
            fh.write(data)


async def torn_write(ctx: Ctx) -> int:
    line = LINES[SPLIT]
    for piece in (line[:7], line[7 : len(line) // 2], line[len(line) // 2 :]):
        ctx.append(piece)
        await asyncio.sleep(PAUSE)
    ctx.append(b"".join(LINES[SPLIT + 1 :]))
    return 0


async def truncate_and_rewrite(ctx: Ctx) -> int:
    with ctx.path.open("r+b") as fh:
        fh.truncate(0)
    await asyncio.sleep(PAUSE)
    ctx.append(b"".join(LINES))
    return 0


async def replace_by_rename(ctx: Ctx) -> int:
    tmp = ctx.project / "tmp.partial"
    tmp.write_bytes(b"".join(LINES))
    os.replace(tmp, ctx.path)
    return 0


async def delete_and_recreate(ctx: Ctx) -> int:
    ctx.path.unlink()
    await asyncio.sleep(PAUSE)
    ctx.path.write_bytes(b"".join(LINES))
    return 0


async def directory_deleted(ctx: Ctx) -> int:
    shutil.rmtree(ctx.project)
    await asyncio.sleep(PAUSE)
    ctx.project.mkdir()
    ctx.path.write_bytes(b"".join(LINES))
    return 0


async def permission_denied(ctx: Ctx) -> int:
    ctx.path.chmod(0o000)
    ctx.append(LINES[SPLIT])  # grows while unreadable
    await asyncio.sleep(PAUSE * 2)
    ctx.path.chmod(0o644)
    ctx.append(b"".join(LINES[SPLIT + 1 :]))
    return 0


async def invalid_utf8(ctx: Ctx) -> int:
    ctx.append(b'{"type":"user","message":{"role":"user","content":"caf\xc3\x28 \xff\xfe"}}\n')
    ctx.append(b"".join(LINES[SPLIT:]))
    return 1


async def nul_bytes(ctx: Ctx) -> int:
    ctx.append(b"\x00" * 4096 + b"\n")  # a preallocated, never-written block
    ctx.append(b'{"type":"user",\x00"message":{}}\n')
    ctx.append(b"".join(LINES[SPLIT:]))
    return 2


async def lone_surrogate(ctx: Ctx) -> int:
    # Valid JSON (an escaped lone surrogate, as a writer cutting a UTF-16 pair produces) that
    # is not encodable as UTF-8: it must not break the stream for every client.
    ctx.append(b'{"type":"user","message":{"role":"user","content":"cut \\ud83d here"},'
               b'"timestamp":"2025-09-07T09:52:03.071Z"}\n')  # fmt: skip
    ctx.append(b"".join(LINES[SPLIT:]))
    return 0


async def huge_single_line(ctx: Ctx) -> int:
    record_ = {"type": "user", "message": {"role": "user", "content": "x" * (50 << 20)}}
    ctx.append(json.dumps(record_).encode() + b"\n")
    ctx.append(b"".join(LINES[SPLIT:]))
    return 1


async def deeply_nested_json(ctx: Ctx) -> int:
    depth = 100_000
    ctx.append(b"[" * depth + b"]" * depth + b"\n")
    ctx.append(b'{"type":"user","message":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}\n")
    ctx.append(b"".join(LINES[SPLIT:]))
    return 2


async def ten_thousand_tiny_files(ctx: Ctx) -> int:
    other = ctx.project.parent / "-tmp-many"
    other.mkdir()
    for n in range(10_000):
        record_ = {"type": "user", "cwd": "/tmp/many", "sessionId": f"tiny-{n}",
                   "message": {"role": "user", "content": f"tiny {n}"},
                   "timestamp": "2025-01-01T00:00:00.000Z"}  # fmt: skip
        (other / f"tiny-{n:05d}.jsonl").write_text(json.dumps(record_) + "\n")
    ctx.append(b"".join(LINES[SPLIT:]))
    return 0


FAULTS: dict[str, Callable[[Ctx], Awaitable[int]]] = {
    f.__name__: f
    for f in (
        torn_write,
        truncate_and_rewrite,
        replace_by_rename,
        delete_and_recreate,
        directory_deleted,
        permission_denied,
        invalid_utf8,
        nul_bytes,
        lone_surrogate,
        huge_single_line,
        deeply_nested_json,
        ten_thousand_tiny_files,
    )  # fmt: skip
}


async def run_fault(tmp: Path, name: str) -> dict[str, Any]:
    server = Server(tmp, unprivileged=name == "permission_denied")
    project = server.claude / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / MID_SESSION.name
    path.write_bytes(b"".join(LINES[:SPLIT]))
    server.start()
    stop = asyncio.Event()
    mirror = Mirror(server, f"/workspace/{CLAUDE_WS}/session/stream?session={SID}&limit=10000")
    task = None
    fresh: list[dict[str, Any]] = []
    want: list[dict[str, Any]] = []
    try:
        wait_until(lambda: server.snapshot(CLAUDE_WS, SID)["total"] > 0, 20, "session indexed")
        task = asyncio.create_task(mirror.run(stop))
        await until(lambda: mirror.connects > 0, 10, step=0.05)
        errors_before = server.health()["parse_errors"]
        rss_before = server.rss()
        t0 = time.monotonic()
        min_errors = await FAULTS[name](Ctx(server, project, path))
        # The oracle: a clean parse of the file as it now is (good lines only).
        want = await asyncio.to_thread(clean_parse, path)

        async def recovered() -> bool:
            nonlocal fresh
            fresh = (await asyncio.to_thread(server.snapshot, CLAUDE_WS, SID))["items"]
            return [_no_id(i) for i in fresh] == want and [canon(i) for i in mirror.items] == [
                canon(i) for i in fresh
            ]

        ok = await until(recovered, 120)  # 10,000 new files take a while on 2 busy cores
        recovery_s = time.monotonic() - t0
        health = server.health()
        rss_after = server.rss()
        alive = server.alive()
    finally:
        stop.set()
        if task is not None:
            await asyncio.wait_for(task, 10)
        server.stop()
    skipped = health["parse_errors"] - errors_before
    result = {
        "case": name,
        "recovered": ok,
        "recovery_s": round(recovery_s, 2),
        "parse_errors_counted": skipped,
        "lost": len({canon(_no_id(i)) for i in want} - {canon(_no_id(i)) for i in mirror.items}),
        "duplicates": mirror.duplicates,
        "resets": mirror.resets,
        "crashes": 0 if alive else 1,
        "rss_before": rss_before,
        "rss_after": rss_after,
    }
    assert alive and health["status"] == "ok", result
    assert ok, (result, [_no_id(i)["type"] for i in fresh][-5:])
    assert skipped == min_errors, result
    assert mirror.duplicates == 0 and mirror.gaps == 0, result
    assert not unexpected_tracebacks(server.stderr()), server.stderr()[-3000:]
    return result


@pytest.mark.parametrize("name", list(FAULTS))
async def test_file_fault_is_survived_counted_and_recovered(name: str, tmp_path: Path) -> None:
    result = await run_fault(tmp_path, name)
    record(f"file fault: {name}", result, trials=1)
    if name == "huge_single_line":
        # The 50 MB line is skipped while it streams past, never held whole.
        assert result["rss_after"] - result["rss_before"] < 40 << 20, result
