"""`sidemirror ingest`: stream stdin NDJSON to the running server, line by line as it arrives.

The exit status mirrors the run, so a script can tell a finished run from a failed or cancelled
one (`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

# The run's outcome, as the server's answer gives it (`status`), → the exit status. A format that
# reports no outcome (`events`) exits 0; 2 is kept for "no server reached, or it refused".
EXIT_CODES = {"ok": 0, "failed": 1, "stopped": 3}
EXIT_UNREACHABLE = 2


async def _stdin_lines() -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.buffer.readline)
        if not line:
            return
        yield line


async def _post(url: str, token: str, params: dict[str, str]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(url, params=params, headers=headers, data=_stdin_lines()) as resp,
    ):
        body = await resp.json(content_type=None)
        if resp.status != 200:
            raise RuntimeError(f"server answered {resp.status}: {body}")
        return dict(body)


def run_ingest(args: argparse.Namespace, info: dict[str, Any] | None) -> int:
    if info is None:
        print(
            "sidemirror ingest: no running server (start it with: sidemirror serve)",
            file=sys.stderr,
        )
        return EXIT_UNREACHABLE
    params = {"workspace": str(args.workspace), "format": args.format}
    if args.session:
        params["session"] = args.session
    url = f"http://127.0.0.1:{info['port']}/api/ingest"
    try:
        result = asyncio.run(_post(url, str(info["token"]), params))
    except (aiohttp.ClientError, RuntimeError, OSError) as exc:
        print(f"sidemirror ingest: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    print(json.dumps(result), file=sys.stderr)
    return EXIT_CODES.get(str(result.get("status")), 0)
