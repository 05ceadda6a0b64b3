"""`sidemirror ingest`: stream stdin NDJSON to the running server, line by line as it arrives.

The exit status mirrors the run: 0 when it succeeded, 1 when the server reports the agent's run
failed (stream-json `result` error subtypes), 2 when the server cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp


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
        return 2
    params = {"workspace": str(args.workspace), "format": args.format}
    if args.session:
        params["session"] = args.session
    url = f"http://127.0.0.1:{info['port']}/api/ingest"
    try:
        result = asyncio.run(_post(url, str(info["token"]), params))
    except (aiohttp.ClientError, RuntimeError, OSError) as exc:
        print(f"sidemirror ingest: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result), file=sys.stderr)
    return 1 if result.get("status") == "failed" else 0
