"""`POST /mcp` on the wire (issue 7): one test per Streamable HTTP / JSON-RPC rule, then tools."""

from __future__ import annotations

import json
from typing import Any, get_args

import jsonschema
import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient
from sidemirror.core.models import ITEM_MODELS
from sidemirror.mcp.endpoint import MAX_SESSIONS, MCP_SESSIONS, SessionTable
from sidemirror.mcp.schemas import ItemType
from sidemirror.mcp.tools import TOOLS

from tests.harness.auth import AUTH, TOKEN
from tests.server.support import EXT_ORIGIN, ClientFactory, ingest, state_of

Client = TestClient[Any, Any]
JSON = {**AUTH, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
V = "2025-06-18"


async def post(
    client: Client,
    body: Any,
    *,
    session: str | None = None,
    version: str | None = V,
    headers: dict[str, str] | None = None,
) -> ClientResponse:
    h = dict(JSON)
    if session is not None:
        h["Mcp-Session-Id"] = session
    if version is not None:
        h["MCP-Protocol-Version"] = version
    h.update(headers or {})
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return await client.post("/mcp", data=data, headers=h)


def init_body(version: str = V, id_: Any = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "pytest", "version": "1"},
        },
    }


async def open_session(client: Client, version: str = V) -> str:
    resp = await post(client, init_body(version), version=None)
    assert resp.status == 200, await resp.text()
    sid = resp.headers["Mcp-Session-Id"]
    resp = await post(
        client,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        session=sid,
        version=version,
    )
    assert resp.status == 202
    return sid


async def rpc(
    client: Client,
    sid: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    version: str = V,
    id_: Any = 7,
) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        body["params"] = params
    resp = await post(client, body, session=sid, version=version)
    return resp.status, await resp.json()


async def call(
    client: Client, sid: str, name: str, arguments: Any = None, **kw: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    status, body = await rpc(client, sid, "tools/call", params, **kw)
    assert status == 200, body
    result: dict[str, Any] = body.get("result") or body
    return result


def error_of(body: dict[str, Any]) -> tuple[int, str]:
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    return body["error"]["code"], body["error"]["message"]


# --- lifecycle and negotiation ---


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-06-18"),
        ("2025-11-25", "2025-06-18"),
        ("someday", "2025-06-18"),
    ],
)
async def test_initialize_negotiates_and_issues_a_session(
    make_client: ClientFactory, asked: str, answered: str
) -> None:
    client = await make_client()
    resp = await post(client, init_body(asked, id_="init-1"), version=None)
    assert resp.status == 200
    assert resp.content_type == "application/json"
    body = await resp.json()
    assert body["id"] == "init-1"
    result = body["result"]
    assert result["protocolVersion"] == answered
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "sidemirror"
    assert "sidemirror_report_browser_action" in result["instructions"]
    sid = resp.headers["Mcp-Session-Id"]
    assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    assert "Mcp-Session-Id" in resp.headers["Access-Control-Expose-Headers"]
    assert resp.headers["Cache-Control"] == "no-store"


async def test_each_initialize_opens_a_new_session(make_client: ClientFactory) -> None:
    client = await make_client()
    first = await open_session(client)
    # The version header is ignored on initialize: the body is the negotiation.
    resp = await post(client, init_body(), session=first, version="2025-11-25")
    assert resp.status == 200
    second = resp.headers["Mcp-Session-Id"]
    assert second != first
    assert (await rpc(client, first, "ping"))[0] == 200
    assert (await rpc(client, second, "ping"))[0] == 200


@pytest.mark.parametrize("params", [None, {}, {"protocolVersion": 20250618}, []])
async def test_initialize_without_a_protocol_version_is_invalid_params(
    make_client: ClientFactory, params: Any
) -> None:
    client = await make_client()
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    if params is not None:
        body["params"] = params
    resp = await post(client, body, version=None)
    assert resp.status == 200
    assert error_of(await resp.json())[0] == -32602
    assert "Mcp-Session-Id" not in resp.headers
    assert len(state_of_sessions(client)) == 0


def state_of_sessions(client: Client) -> SessionTable:
    app = client.server.app
    assert isinstance(app, web.Application)
    return app[MCP_SESSIONS]


async def test_initialized_notification_is_202_without_body(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await post(client, init_body(), version=None)
    sid = resp.headers["Mcp-Session-Id"]
    assert state_of_sessions(client).get(sid).initialized is False  # type: ignore[union-attr]
    resp = await post(
        client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=sid
    )
    assert resp.status == 202
    assert await resp.read() == b""
    assert state_of_sessions(client).get(sid).initialized is True  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "message",
    [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "x"},
        },
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": 5, "result": {}},
        {"jsonrpc": "2.0", "id": "r", "error": {"code": -1, "message": "no"}},
    ],
)
async def test_notifications_and_responses_are_accepted_with_202(
    make_client: ClientFactory, message: dict[str, Any]
) -> None:
    client = await make_client()
    sid = await open_session(client)
    resp = await post(client, message, session=sid)
    assert resp.status == 202
    assert await resp.read() == b""


async def test_ping(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    assert await rpc(client, sid, "ping", id_="p") == (
        200,
        {"jsonrpc": "2.0", "id": "p", "result": {}},
    )


# --- JSON-RPC errors ---


async def test_parse_error(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    resp = await post(client, '{"jsonrpc": "2.0", "id": 1, "method": "ping"', session=sid)
    assert resp.status == 400
    body = await resp.json()
    assert body["id"] is None
    assert error_of(body)[0] == -32700


@pytest.mark.parametrize(
    "batch",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ],
        [],
    ],
)
async def test_batches_are_invalid_requests(make_client: ClientFactory, batch: Any) -> None:
    client = await make_client()
    sid = await open_session(client)
    resp = await post(client, batch, session=sid)
    assert resp.status == 400
    code, message = error_of(await resp.json())
    assert code == -32600
    assert "batch" in message


@pytest.mark.parametrize(
    "message",
    [
        '"ping"',  # raw body: a JSON string
        42,
        None,
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "result": {}},
    ],
)
async def test_malformed_messages_are_invalid_requests(
    make_client: ClientFactory, message: Any
) -> None:
    client = await make_client()
    sid = await open_session(client)
    resp = await post(client, message, session=sid)
    assert resp.status == 400
    assert error_of(await resp.json())[0] == -32600


async def test_unknown_method(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    status, body = await rpc(client, sid, "resources/list", id_=9)
    assert status == 200 and body["id"] == 9
    code, message = error_of(body)
    assert code == -32601 and "resources/list" in message


@pytest.mark.parametrize("params", [[1, 2], "x", 3])
async def test_params_must_be_an_object(make_client: ClientFactory, params: Any) -> None:
    client = await make_client()
    sid = await open_session(client)
    resp = await post(
        client, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}, session=sid
    )
    assert resp.status == 200
    assert error_of(await resp.json())[0] == -32602


# --- transport rules: protocol version header, sessions, methods ---


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2025-6-18", "latest", ""])
async def test_unsupported_protocol_version_header_is_400(
    make_client: ClientFactory, version: str
) -> None:
    client = await make_client()
    sid = await open_session(client)
    status, body = await rpc(client, sid, "ping", version=version)
    assert status == 400
    code, message = error_of(body)
    assert code == -32600 and "MCP-Protocol-Version" in message
    assert body["error"]["data"]["supported"] == ["2025-06-18", "2025-03-26"]


async def test_supported_or_missing_protocol_version_header_is_accepted(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    sid = await open_session(client)
    for version in ("2025-06-18", "2025-03-26"):
        assert (await rpc(client, sid, "ping", version=version))[0] == 200
    # No header: the spec says assume 2025-03-26, which this server speaks.
    resp = await post(
        client, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, session=sid, version=None
    )
    assert resp.status == 200


async def test_missing_session_id_is_400(make_client: ClientFactory) -> None:
    client = await make_client()
    await open_session(client)
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ):
        resp = await post(client, message)
        assert resp.status == 400
        code, text = error_of(await resp.json())
        assert code == -32600 and "Mcp-Session-Id" in text


async def test_unknown_session_id_is_404(make_client: ClientFactory) -> None:
    client = await make_client()
    await open_session(client)
    status, body = await rpc(client, "not-a-session", "ping", id_=3)
    assert status == 404
    assert body["id"] == 3 and error_of(body)[0] == -32001


async def test_delete_ends_the_session(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    other = await open_session(client)
    headers = {**AUTH, "Mcp-Session-Id": sid, "MCP-Protocol-Version": V}
    resp = await client.delete("/mcp", headers=headers)
    assert resp.status == 204
    assert (await rpc(client, sid, "ping"))[0] == 404
    assert (await client.delete("/mcp", headers=headers)).status == 404
    assert (await client.delete("/mcp", headers=AUTH)).status == 400
    assert (await rpc(client, other, "ping"))[0] == 200  # only that session ended


async def test_get_is_405_with_allow(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await client.get("/mcp", headers={**AUTH, "Accept": "text/event-stream"})
    assert resp.status == 405
    assert resp.headers["Allow"] == "POST, DELETE"
    assert (await resp.json())["error"]["code"] == "method_not_allowed"


def test_session_table_is_bounded_lru() -> None:
    table = SessionTable(capacity=3)
    a, b, c = (table.open(V, "x") for _ in range(3))
    assert table.get(a.id) is a  # a is now the most recently used
    d = table.open(V, "x")
    assert len(table) == 3
    assert table.get(b.id) is None  # b was the least recently used
    assert {table.get(s.id) for s in (a, c, d)} == {a, c, d}
    assert table.close(a.id) and not table.close(a.id)
    assert SessionTable().capacity == MAX_SESSIONS == 256


async def test_evicted_session_gets_404(make_client: ClientFactory) -> None:
    client = await make_client()
    state_of_sessions(client).capacity = 2
    first = await open_session(client)
    await open_session(client)
    await open_session(client)
    assert len(state_of_sessions(client)) == 2
    assert (await rpc(client, first, "ping"))[0] == 404


# --- the same security rules as every other route ---


async def test_token_is_required(make_client: ClientFactory) -> None:
    client = await make_client()
    for auth in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        resp = await client.post(
            "/mcp",
            data=json.dumps(init_body()),
            headers={"Content-Type": "application/json", **auth},
        )
        assert resp.status == 401
        assert "Mcp-Session-Id" not in resp.headers
    assert (await client.get("/mcp")).status == 401
    assert (await client.delete("/mcp")).status == 401
    assert len(state_of_sessions(client)) == 0


async def test_foreign_host_and_origin_are_refused(make_client: ClientFactory) -> None:
    client = await make_client()
    resp = await post(client, init_body(), headers={"Host": f"evil.example:{client.port}"})
    assert resp.status == 421
    resp = await post(client, init_body(), headers={"Origin": "https://evil.example"})
    assert resp.status == 403
    assert "Access-Control-Allow-Origin" not in resp.headers
    assert len(state_of_sessions(client)) == 0


async def test_extension_origin_can_use_mcp(make_client: ClientFactory) -> None:
    client = await make_client()
    preflight = await client.options(
        "/mcp",
        headers={
            "Origin": EXT_ORIGIN,
            "Access-Control-Request-Method": "DELETE",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id",
        },
    )
    assert preflight.status == 204
    assert "DELETE" in preflight.headers["Access-Control-Allow-Methods"]
    assert "Mcp-Session-Id" in preflight.headers["Access-Control-Allow-Headers"]
    resp = await post(client, init_body(), headers={"Origin": EXT_ORIGIN})
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == EXT_ORIGIN
    assert "Mcp-Session-Id" in resp.headers["Access-Control-Expose-Headers"]


async def test_body_rules(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    resp = await post(client, ping, session=sid, headers={"Content-Type": "text/plain"})
    assert resp.status == 415
    big = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (1 << 20)}}
    )
    resp = await post(client, big, session=sid)
    assert resp.status == 413
    resp = await post(client, ping, session=sid, headers={"Accept": "text/event-stream"})
    assert resp.status == 406
    for accept in ("application/json", "*/*", "text/event-stream, application/json;q=0.9"):
        resp = await post(client, ping, session=sid, headers={"Accept": accept})
        assert resp.status == 200, accept


# --- tools ---


async def test_tools_list(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    status, body = await rpc(client, sid, "tools/list", {"cursor": "ignored"})
    assert status == 200
    tools = body["result"]["tools"]
    assert "nextCursor" not in body["result"]
    assert [t["name"] for t in tools] == [
        "sidemirror_list_workspaces",
        "sidemirror_get_session",
        "sidemirror_report_browser_action",
        "sidemirror_get_activity",
        "sidemirror_browser_events",
    ]
    for tool in tools:
        assert tool["description"] and tool["title"]
        for schema in (tool["inputSchema"], tool["outputSchema"]):
            assert schema["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(schema)
        assert tool["annotations"]["openWorldHint"] is False
    by_name = {t["name"]: t for t in tools}
    report = by_name["sidemirror_report_browser_action"]
    assert report["inputSchema"]["required"] == ["command"]
    assert report["annotations"]["readOnlyHint"] is False
    assert by_name["sidemirror_get_session"]["inputSchema"]["required"] == ["workspace"]
    assert by_name["sidemirror_get_session"]["annotations"]["readOnlyHint"] is True
    # pydantic's generated titles are dropped, but a property *named* title is kept.
    out = by_name["sidemirror_get_session"]["outputSchema"]
    assert "title" in out["properties"] and "title" not in out


async def test_old_protocol_sessions_get_the_2025_03_26_shapes(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    sid = await open_session(client, "2025-03-26")
    _, body = await rpc(client, sid, "tools/list", version="2025-03-26")
    for tool in body["result"]["tools"]:
        assert "outputSchema" not in tool and "title" not in tool
    result = await call(client, sid, "sidemirror_list_workspaces", version="2025-03-26")
    assert "structuredContent" not in result
    assert json.loads(result["content"][0]["text"]) == {"workspaces": []}


def assert_structured(result: dict[str, Any], name: str) -> dict[str, Any]:
    """The 2025-06-18 contract: structured output matching the schema, and the same as text."""
    assert result["isError"] is False, result
    structured: dict[str, Any] = result["structuredContent"]
    assert result["content"] == [
        {"type": "text", "text": json.dumps(structured, ensure_ascii=False, separators=(",", ":"))}
    ]
    jsonschema.validate(structured, TOOLS[name].definition["outputSchema"])
    return structured


async def test_list_workspaces_matches_the_http_api(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "hi"}], workspace="/home/dev/one")
    await ingest(client, [{"type": "user", "content": "hi"}], workspace="/home/dev/two")
    sid = await open_session(client)
    out = assert_structured(
        await call(client, sid, "sidemirror_list_workspaces", {}), "sidemirror_list_workspaces"
    )
    http = await (await client.get("/api/workspaces", headers=AUTH)).json()
    assert out == http
    assert [w["directory"] for w in out["workspaces"]] == ["/home/dev/two", "/home/dev/one"]


async def test_get_session_recent_items_filtered_and_truncated(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    long_text = "word " * 300
    await ingest(
        client,
        [
            {"type": "user", "content": "first prompt"},
            {"type": "assistant", "content": long_text},
            {"type": "user", "content": "second prompt"},
            {"type": "assistant", "content": "short answer"},
        ],
    )
    ws = next(iter(state_of(client).store.workspaces.values()))
    sid = await open_session(client)
    name = "sidemirror_get_session"
    out = assert_structured(await call(client, sid, name, {"workspace": ws.id}), name)
    assert (out["workspace"], out["session"], out["total"], out["matched"]) == (ws.id, "s1", 4, 4)
    assert out["cursor"] == f"{out['epoch']}.4"
    assert [i["seq"] for i in out["items"]] == [1, 2, 3, 4]
    long_item = out["items"][1]
    assert long_item["truncated"] is True and long_item["full_length"] == len(long_text)
    assert len(long_item["content"]) <= 501

    out = assert_structured(
        await call(
            client,
            sid,
            name,
            {"workspace": "/home/dev/project", "session": "s1", "types": ["user"], "limit": 1},
        ),
        name,
    )
    assert out["matched"] == 2
    assert [(i["type"], i["content"]) for i in out["items"]] == [("user", "second prompt")]


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({}, "workspace"),
        ({"workspace": ""}, "workspace"),
        ({"workspace": "x", "limit": 0}, "limit"),
        ({"workspace": "x", "limit": 501}, "limit"),
        ({"workspace": "x", "limit": "5"}, "limit"),
        ({"workspace": "x", "types": ["bogus"]}, "types.0"),
        ({"workspace": "x", "types": []}, "types"),
        ({"workspace": "x", "colour": "red"}, "colour"),
        ({"workspace": 12}, "workspace"),
    ],
)
async def test_schema_violations_are_invalid_params(
    make_client: ClientFactory, arguments: dict[str, Any], path: str
) -> None:
    client = await make_client()
    sid = await open_session(client)
    body = await call(client, sid, "sidemirror_get_session", arguments)
    code, message = error_of(body)
    assert code == -32602 and "sidemirror_get_session" in message
    assert path in [e["path"] for e in body["error"]["data"]["errors"]]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "sidemirror_nope"},
        {"name": "list_workspaces"},
        {},
        {"name": 3},
        {"name": "sidemirror_list_workspaces", "arguments": [1]},
    ],
)
async def test_unknown_tool_and_bad_call_params_are_invalid_params(
    make_client: ClientFactory, params: dict[str, Any]
) -> None:
    client = await make_client()
    sid = await open_session(client)
    status, body = await rpc(client, sid, "tools/call", params)
    assert status == 200
    assert error_of(body)[0] == -32602


async def test_tool_failures_are_error_results(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "hi"}])
    sid = await open_session(client)
    for arguments, needle in (
        ({"workspace": "/nowhere"}, "unknown workspace '/nowhere'"),
        ({"workspace": "/home/dev/project", "session": "s9"}, "unknown session 's9'"),
    ):
        result = await call(client, sid, "sidemirror_get_session", arguments)
        assert result["isError"] is True
        assert "structuredContent" not in result
        assert result["content"][0]["type"] == "text"
        assert needle in result["content"][0]["text"]


async def test_a_crashing_tool_is_an_error_result_not_a_500(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    sid = await open_session(client)

    def boom(*_: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(state_of(client).store, "workspaces_by_activity", boom)
    result = await call(client, sid, "sidemirror_list_workspaces")
    assert result["isError"] is True
    assert "RuntimeError: disk on fire" in result["content"][0]["text"]


async def test_report_browser_action_feeds_the_activity_log(make_client: ClientFactory) -> None:
    client = await make_client()
    sid = await open_session(client)
    name = "sidemirror_report_browser_action"
    out = assert_structured(await call(client, sid, name, {"command": "goto"}), name)
    assert out["entry"]["command"] == "goto" and out["entry"]["id"]
    assert out["entry"]["source"] == "mcp" and out["entry"]["status"] == "ok"
    out = assert_structured(
        await call(
            client,
            sid,
            name,
            {
                "command": "fill",
                "args": ["#password", "hunter2"],
                "url": "https://example.com/login",
                "workspace": "/home/dev/project",
                "status": "ok",
                "duration_ms": 12,
                "refs": [{"ref": "e3", "role": "textbox", "name": "Password"}],
            },
        ),
        name,
    )
    entry = out["entry"]
    assert entry["args"] == ["#password", "[REDACTED:typed]"]
    assert "hunter2" not in json.dumps(out)

    got = assert_structured(
        await call(client, sid, "sidemirror_get_activity", {"workspace": "/home/dev/project"}),
        "sidemirror_get_activity",
    )
    assert [e["command"] for e in got["entries"]] == ["fill"]
    everything = assert_structured(
        await call(client, sid, "sidemirror_get_activity", {}), "sidemirror_get_activity"
    )
    assert {e["command"] for e in everything["entries"]} == {"goto", "fill"}
    assert everything["workspace"] is None
    http = await client.get("/activity/stream", headers=AUTH)
    assert http.status == 200
    http.close()


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"command": ""},
        {"command": "x", "type": "bogus"},
        {"command": "x", "args": [1]},
        {"command": "x", "refs": [{"role": "button"}]},
        {"command": "x", "id": "1.1"},
    ],
)
async def test_report_browser_action_schema(
    make_client: ClientFactory, arguments: dict[str, Any]
) -> None:
    client = await make_client()
    sid = await open_session(client)
    body = await call(client, sid, "sidemirror_report_browser_action", arguments)
    assert error_of(body)[0] == -32602


def test_item_type_filter_names_every_item_model() -> None:
    assert set(get_args(ItemType)) == {m.model_fields["type"].default for m in ITEM_MODELS}
