"""Interoperability: the official MCP Python SDK's Streamable HTTP client against a real server.

The server runs on a loopback port (aiohttp's TestServer, the same app `sidemirror serve` runs);
the SDK connects with the token as an `Authorization: Bearer` header, as `claude mcp add
--transport http ... --header` would. The SDK checks every structured result against the tool's
outputSchema, so these calls also prove the advertised schemas are honest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import pytest
from aiohttp.test_utils import TestServer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from sidemirror.app import create_app
from sidemirror.mcp.endpoint import MCP_SESSIONS

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.harness.server import Server
from tests.server.sse import SSEReader
from tests.server.support import make_settings

ServerFactory = Callable[..., Awaitable[TestServer]]
WORKSPACE = "/home/dev/project"


@pytest.fixture
async def server(aiohttp_server: ServerFactory, tmp_path: Path) -> AsyncIterator[TestServer]:
    srv = await aiohttp_server(create_app(make_settings(tmp_path), TOKEN))
    lines = [
        {"type": "user", "content": "fix the login page"},
        {"type": "assistant", "content": "Looking at login.html now."},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines)
    async with aiohttp.ClientSession() as http:
        resp = await http.post(
            srv.make_url("/api/ingest"),
            data=body,
            headers=NDJSON,
            params={"workspace": WORKSPACE, "format": "events", "session": "s1"},
        )
        assert resp.status == 200, await resp.text()
    yield srv


def sdk_client(srv: TestServer, http: httpx2.AsyncClient, mode: str) -> Client:
    url = str(srv.make_url("/mcp"))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.filterwarnings("ignore:ping is removed")
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_connects_lists_and_calls_every_tool(server: TestServer, mode: str) -> None:
    # "auto" first probes the newer stateless era (server/discover); this server must make the
    # SDK fall back to the initialize handshake cleanly, as any installed client would.
    async with (
        httpx2.AsyncClient(headers=AUTH, timeout=10) as http,
        sdk_client(server, http, mode) as client,
    ):
        assert client.protocol_version == "2025-06-18"
        assert client.server_info is not None and client.server_info.name == "sidemirror"
        await client.send_ping()

        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {
            "sidemirror_list_workspaces",
            "sidemirror_get_session",
            "sidemirror_report_browser_action",
            "sidemirror_get_activity",
            "sidemirror_browser_events",
        }
        assert all(t.output_schema for t in tools.values())

        listed = await client.call_tool("sidemirror_list_workspaces", {})
        assert not listed.is_error
        assert listed.structured_content is not None
        (ws,) = listed.structured_content["workspaces"]
        assert ws["directory"] == WORKSPACE

        session = await client.call_tool(
            "sidemirror_get_session", {"workspace": ws["id"], "types": ["assistant"], "limit": 5}
        )
        assert not session.is_error and session.structured_content is not None
        assert [i["content"] for i in session.structured_content["items"]] == [
            "Looking at login.html now."
        ]

        reported = await client.call_tool(
            "sidemirror_report_browser_action",
            {
                "command": "goto",
                "args": ["https://example.com/login"],
                "workspace": WORKSPACE,
                "status": "ok",
            },
        )
        assert not reported.is_error and reported.structured_content is not None
        entry = reported.structured_content["entry"]

        activity = await client.call_tool("sidemirror_get_activity", {"workspace": WORKSPACE})
        assert not activity.is_error and activity.structured_content is not None
        assert [e["id"] for e in activity.structured_content["entries"]] == [entry["id"]]

        missing = await client.call_tool("sidemirror_get_session", {"workspace": "/elsewhere"})
        assert missing.is_error
        assert "unknown workspace" in missing.content[0].text  # type: ignore[union-attr]

        with pytest.raises(MCPError) as bad:
            await client.call_tool("sidemirror_get_session", {"workspace": ws["id"], "limit": 0})
        assert bad.value.code == -32602
        assert len(server.app[MCP_SESSIONS]) == 1
    # Leaving the client sends DELETE /mcp: the session is gone.
    assert len(server.app[MCP_SESSIONS]) == 0


async def test_reported_action_appears_on_the_activity_stream(server: TestServer) -> None:
    async with aiohttp.ClientSession() as http:
        stream = await http.get(server.make_url("/activity/stream"), headers=AUTH)
        assert stream.status == 200
        reader = SSEReader(stream)

        async with (
            httpx2.AsyncClient(headers=AUTH, timeout=10) as hx,
            sdk_client(server, hx, "legacy") as client,
        ):
            result = await client.call_tool(
                "sidemirror_report_browser_action",
                {
                    "command": "fill",
                    "args": ["#password", "hunter2"],
                    "workspace": WORKSPACE,
                    "url": "https://example.com/login",
                    "status": "ok",
                    "duration_ms": 40,
                },
            )
            assert not result.is_error and result.structured_content is not None
            reported = result.structured_content["entry"]

        async def next_activity() -> Any:
            while True:
                frame = await reader.event()
                if frame.event == "activity":
                    return frame

        frame = await asyncio.wait_for(next_activity(), timeout=5)
        assert frame.id == reported["id"]
        assert frame.data["command"] == "fill"
        assert frame.data["args"] == ["#password", "[REDACTED:typed]"]
        assert "hunter2" not in frame.raw.decode()
        stream.close()


async def test_sdk_against_sidemirror_serve(tmp_path: Path) -> None:
    """`sidemirror serve` as a user runs it: the endpoint and token a Connect snippet names."""
    with Server(tmp_path) as server:
        url = server.url("/mcp")
        async with (
            httpx2.AsyncClient(headers=AUTH, timeout=10) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            assert client.protocol_version == "2025-06-18"
            tools = (await client.list_tools()).tools
            assert len(tools) == 5
            listed = await client.call_tool("sidemirror_list_workspaces", {})
            assert listed.structured_content == {"workspaces": []}
        async with httpx2.AsyncClient(timeout=10) as http:
            resp = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert resp.status_code == 401  # no token, no MCP
