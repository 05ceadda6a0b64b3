"""`sidemirror_browser_events` through the official MCP SDK client: what the browser showed since
the agent's last Edit, since one of its tool calls, or since a time, each event naming the call
that caused it (the recorded Playwright session of tests/server/helpers/browser_session.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import pytest
from aiohttp.test_utils import TestServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sidemirror.app import create_app

from tests.harness.auth import AUTH, TOKEN
from tests.server.helpers.browser_session import (
    CALLS,
    CWD,
    TOOL_IDS,
    activity_body,
    iso,
    session_base,
    write_transcript,
)
from tests.server.support import make_settings

ServerFactory = Callable[..., Awaitable[TestServer]]


@pytest.fixture
async def server(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> AsyncIterator[tuple[TestServer, datetime]]:
    projects = tmp_path / "projects"
    base = session_base()
    write_transcript(projects, base)
    srv = await aiohttp_server(create_app(make_settings(tmp_path, claude_dirs=[projects]), TOKEN))
    async with aiohttp.ClientSession(headers=AUTH) as http:
        for _ in range(400):  # until the transcript is indexed and read whole
            listed = await (await http.get(srv.make_url("/api/workspaces"))).json()
            if listed["workspaces"]:
                snap = await (
                    await http.get(
                        srv.make_url(f"/workspace/{listed['workspaces'][0]['id']}/session")
                    )
                ).json()
                if sum(i["type"] == "tool_result" for i in snap["items"]) == len(CALLS):
                    break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the transcript was never read whole")
        resp = await http.post(srv.make_url("/api/activity"), json=activity_body(base))
        assert resp.status == 200, await resp.text()
    yield srv, base


async def call(srv: TestServer, arguments: dict[str, Any]) -> Any:
    url = str(srv.make_url("/mcp"))
    async with (
        httpx2.AsyncClient(headers=AUTH, timeout=10) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        return await client.call_tool("sidemirror_browser_events", arguments)


@pytest.mark.filterwarnings("ignore:ping is removed")
async def test_console_error_after_the_last_edit(server: tuple[TestServer, datetime]) -> None:
    srv, _ = server
    result = await call(srv, {"workspace": CWD, "since": "last_edit", "kinds": ["console"]})
    assert not result.is_error, result.content
    out = result.structured_content
    assert out["since"]["tool_use_id"] == TOOL_IDS["edit2"]
    assert out["since"]["meaning"].startswith("last edit: Edit")
    # After the last Edit: the uncaught error of t=45 (no call caused it), then the exception
    # the second navigation caused — nothing from before the Edit.
    assert [e["error"] for e in out["events"]] == [
        "TypeError: user is null",
        "ReferenceError: theme is not defined",
    ]
    assert out["matched"] == 2
    assert "tool_use_id" not in out["events"][0]
    assert out["events"][1]["tool_use_id"] == TOOL_IDS["nav2"]
    assert out["events"][1]["link"]["label"] == "navigate http://localhost:3000/settings"
    assert out["events"][1]["args"] == ["at render (http://localhost:3000/settings.js:7:3)"]

    # Every observed kind by default: the navigation to /settings too.
    everything = (await call(srv, {"workspace": CWD})).structured_content
    assert [e["command"] for e in everything["events"]] == [
        "console.error",
        "navigate",
        "exception",
    ]


@pytest.mark.filterwarnings("ignore:ping is removed")
async def test_since_a_tool_call_a_time_and_the_cap(server: tuple[TestServer, datetime]) -> None:
    srv, base = server
    click = (
        await call(srv, {"workspace": CWD, "since": TOOL_IDS["click"], "kinds": ["network"]})
    ).structured_content
    assert [e["args"][:2] for e in click["events"]] == [["GET", "http://localhost:3000/api/me"]]
    assert click["events"][0]["tool_use_id"] == TOOL_IDS["click"]

    since = iso(base, 0)
    capped = (
        await call(srv, {"workspace": CWD, "since": since, "limit": 2, "kinds": ["console"]})
    ).structured_content
    # The plan's console errors at 5, 11, 13, 15, 22, 33.5 and 45 s and the exception at 52 s
    # (not the other workspace's error at 11.5 s).
    assert capped["matched"] == 8
    assert [e["error"] for e in capped["events"]] == [
        "TypeError: user is null",
        "ReferenceError: theme is not defined",
    ]

    # No workspace: the one whose agent acted in the browser last (the screenshot command).
    latest = (await call(srv, {"kinds": ["network"]})).structured_content
    assert latest["since"]["tool_use_id"] == TOOL_IDS["edit2"]
    assert latest["matched"] == 0  # no request failed after the last Edit

    bad = await call(srv, {"workspace": CWD, "since": "yesterday-ish"})
    assert bad.is_error and "ISO 8601" in bad.content[0].text
    unknown = await call(srv, {"workspace": "/nowhere"})
    assert unknown.is_error and "unknown workspace" in unknown.content[0].text
