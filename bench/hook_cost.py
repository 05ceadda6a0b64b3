"""What `sidemirror hook` costs Claude Code (issue 17): it runs on every tool call.

- no server: wall time of the whole process, from spawn to exit (it must print nothing and exit
  0), beside `sidemirror --version` (the full CLI) and a bare `python -c pass` (the floor);
- with a server: from spawning the hook with a recorded PermissionRequest to the session's
  `waiting`/`permission` state arriving on `GET /api/attention/stream`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import hook_http  # the HTTP hook beside the command hook (issue 32)
from hook_timing import EVENTS, SIDEMIRROR, summary_ms, timed
from peers import free_port
from sidemirror.runtime_file import read_runtime_file


def no_server(root: Path, n: int = 40) -> dict[str, Any]:
    event = EVENTS.read_text().splitlines()[2].encode()  # a PreToolUse, as on every tool call
    empty = root / "hook-no-server"
    empty.mkdir()
    return {
        "hook, no server": timed([SIDEMIRROR, "hook", "--runtime-dir", str(empty)], event, n),
        "sidemirror --version": timed([SIDEMIRROR, "--version"], b"", max(5, n // 4)),
        "python -c pass (floor)": timed([sys.executable, "-c", "pass"], b"", n),
    }


async def to_waiting(root: Path, n: int = 20) -> dict[str, Any]:
    run, data, port = root / "hook-run", root / "hook-data", free_port()
    proc = subprocess.Popen(
        [SIDEMIRROR, "serve", "--port", str(port), "--runtime-dir", str(run),
         "--data-dir", str(data), "--claude-dir", str(root / "hook-none"),
         "--codex-dir", str(root / "hook-none"), "--decision-timeout", "0.2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(300):
                try:
                    async with http.get(base + "/health") as r:
                        if r.status == 200 and read_runtime_file(run, data) is not None:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
            info = read_runtime_file(run, data)
            assert info is not None, "the server wrote no runtime file"
            token = info["token"]
            auth = {"Authorization": f"Bearer {token}"}
            request = json.loads(EVENTS.read_text().splitlines()[4])
            samples, posted = [], []
            async with http.get(base + "/api/attention/stream", headers=auth) as stream:
                for i in range(2 * n):
                    session = f"bench-{i}"
                    body = json.dumps({**request, "session_id": session}).encode()
                    start = time.perf_counter()
                    if i < n:  # the whole path: a `sidemirror hook` process per event
                        hook = await asyncio.create_subprocess_exec(
                            SIDEMIRROR, "hook", "--runtime-dir", str(run),
                            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
                        )  # fmt: skip
                        assert hook.stdin is not None
                        hook.stdin.write(body)
                        hook.stdin.close()
                        done: Any = hook.wait()
                    else:  # the server's part alone: the same POST from this process
                        headers = {**auth, "Content-Type": "application/json"}
                        done = asyncio.ensure_future(
                            http.post(base + "/api/hooks/claude", data=body, headers=headers)
                        )
                    async for line in stream.content:
                        if line.startswith(b"data: ") and session.encode() in line:
                            data = json.loads(line[6:])
                            if data.get("state") == "waiting":
                                (samples if i < n else posted).append(time.perf_counter() - start)
                                break
                    await done
            return {
                "hook spawn → waiting on the stream": summary_ms(samples),
                "POST /api/hooks/claude → waiting on the stream": summary_ms(posted),
            }
    finally:
        proc.terminate()
        proc.wait(10)


async def measure(root: Path) -> dict[str, Any]:

    out = await asyncio.to_thread(hook_http.measure, root)
    out.update(no_server(root))
    out.update(await to_waiting(root))
    out["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sm-hook-bench-") as tmp:
        print(json.dumps(asyncio.run(measure(Path(tmp))), indent=2))


def rows(result: dict[str, Any] | None, blank: list[str]) -> list[str]:
    """Table lines for the hook phase (no peer runs hooks: our column only)."""
    if not result:
        return []
    out = []
    for label, got in result.items():
        if isinstance(got, dict) and "p50_ms" in got:
            cpu = f", CPU {got['cpu_p50_ms']} ms" if "cpu_p50_ms" in got else ""
            value = f"{got['p50_ms']} / {got['p90_ms']} ms{cpu} (n={got['n']})"
            out.append(client.table_row(f"{label}: p50 / p90", value, blank))
        elif isinstance(got, dict) and label.startswith("instructions"):
            value = ", ".join(f"{k} {v} M" for k, v in got.items() if v is not None)
            out.append(client.table_row(label, value or "valgrind not found", blank))
    if "loadavg_1m" in result:
        out.append(
            client.table_row("hook phase: load average (1 min)", str(result["loadavg_1m"]), blank)
        )
    return out
