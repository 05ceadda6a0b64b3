"""What browser-link costs: the activity stream's first 1,000 entries and a tool card's
`GET …/items/{id}/activity`, against a real `sidemirror serve` whose workspace has a long Claude
session of Playwright MCP calls.

    python bench/browser_links.py [--calls 2000] [--entries 1000] [--rounds 30]

Two workspaces get the same 1,000 entries at the same times: one whose session made `--calls`
browser calls (every entry falls in a call's window, so every entry is linked), and one with no
session (nothing to link). The difference between their replay times is what linking costs. No
peer offers this, so the figures stand alone (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import percentile  # noqa: E402

TOKEN = "bench-token-0123456789abcdef0123456789abcd"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LINKED, UNLINKED = "/bench/linked", "/bench/unlinked"
SESSION = "b0a7b0a7-0000-4000-8000-00000000b1e1"


def iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def transcript(path: Path, base: datetime, calls: int) -> None:
    """A Claude Code transcript: `calls` Playwright clicks, one a second, each 800 ms long."""
    lines = []
    for n in range(calls):
        tool_id = f"toolu_bench{n:08d}"
        common = {"sessionId": SESSION, "cwd": LINKED, "version": "1.0.98", "isSidechain": False,
                  "userType": "external", "uuid": f"u-{n}-a", "parentUuid": None}  # fmt: skip
        lines.append({**common, "type": "assistant", "timestamp": iso(base + timedelta(seconds=n)),
                      "message": {"id": f"m{n}", "role": "assistant", "type": "message",
                                  "content": [{"type": "tool_use", "id": tool_id,
                                               "name": "mcp__playwright__browser_click",
                                               "input": {"ref": f"e{n}"}}]}})  # fmt: skip
        lines.append({**common, "uuid": f"u-{n}-r", "type": "user",
                      "timestamp": iso(base + timedelta(seconds=n + 0.8)),
                      "message": {"role": "user", "content": [{"type": "tool_result",
                                  "tool_use_id": tool_id, "content": "ok"}]}})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def entries(base: datetime, calls: int, count: int, workspace: str) -> list[dict[str, Any]]:
    step = calls / count
    return [{"type": "console", "command": "console.error", "error": f"boom {i}",
             "status": "error", "workspace": workspace, "source": "cdp",
             "ts": iso(base + timedelta(seconds=i * step + 0.4))}
            for i in range(count)]  # fmt: skip


async def replay_ms(http: aiohttp.ClientSession, base_url: str, workspace: str, n: int) -> float:
    """Time from the request to the n-th `event: activity` of a fresh stream."""
    start = time.perf_counter()
    seen = 0
    async with http.get(f"{base_url}/activity/stream", params={"workspace": workspace}) as resp:
        async for line in resp.content:
            if line.startswith(b"event: activity"):
                seen += 1
                if seen == n:
                    return (time.perf_counter() - start) * 1000
    raise RuntimeError("stream ended early")


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-links-"))
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=args.calls + 60)
    transcript(root / "claude" / "-bench-linked" / f"{SESSION}.jsonl", base, args.calls)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidemirror", "serve", "--port", str(port), "--data-dir",
         str(root / "data"), "--runtime-dir", str(root / "run"), "--claude-dir",
         str(root / "claude"), "--codex-dir", str(root / "codex"), "--log-level", "warning"],
        env={**os.environ, "SIDEMIRROR_TOKEN": TOKEN}, stdout=subprocess.PIPE,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}"
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # listening
        async with aiohttp.ClientSession(headers=AUTH) as http:
            for workspace in (LINKED, UNLINKED):
                body = entries(base, args.calls, args.entries, workspace)
                async with http.post(f"{base_url}/api/activity", json=body) as resp:
                    assert resp.status == 200, await resp.text()
            while True:  # the transcript indexed and read
                async with http.get(f"{base_url}/api/workspaces") as resp:
                    listed = (await resp.json())["workspaces"]
                if listed:
                    break
                await asyncio.sleep(0.05)
            ws = listed[0]["id"]
            async with http.get(
                f"{base_url}/workspace/{ws}/session", params={"limit": "10000"}
            ) as resp:
                items = [i for i in (await resp.json())["items"] if i["type"] == "tool_use"]
            first_linked = await replay_ms(
                http, base_url, LINKED, args.entries
            )  # reads the session
            linked = [
                await replay_ms(http, base_url, LINKED, args.entries) for _ in range(args.rounds)
            ]
            unlinked = [await replay_ms(http, base_url, UNLINKED, args.entries)
                        for _ in range(args.rounds)]  # fmt: skip
            route = []
            for i in range(args.rounds):
                item = items[(i * 37) % len(items)]
                start = time.perf_counter()
                async with http.get(
                    f"{base_url}/workspace/{ws}/session/items/{item['id']}/activity"
                ) as resp:
                    body = await resp.json()
                route.append((time.perf_counter() - start) * 1000)
                assert resp.status == 200 and len(body["entries"]) <= 2
    finally:
        proc.terminate()
        proc.wait(10)
    p = lambda xs, q: f"{percentile(xs, q):.1f}"  # noqa: E731
    n = args.entries
    print(f"browser-link bench: {args.calls} Playwright calls in one session, "
          f"{n} entries per workspace, {args.rounds} rounds")  # fmt: skip
    print(f"| replay of {n} entries, all linked: first (session read) | {first_linked:.1f} ms |")
    print(f"| … then p50 / p90 | {p(linked, 50)} / {p(linked, 90)} ms |")
    print(f"| replay of {n} entries, nothing to link: p50 / p90 "
          f"| {p(unlinked, 50)} / {p(unlinked, 90)} ms |")  # fmt: skip
    print(f"| GET …/items/{{id}}/activity p50 / p90 | {p(route, 50)} / {p(route, 90)} ms |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args()))
