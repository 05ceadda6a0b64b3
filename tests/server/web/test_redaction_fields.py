"""Every field a client sends is redacted before it is stored, sent or cut (issue 14): activity
entries, ingested ids and paths, MCP inputs, and the refusals that quote what was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from sidemirror.activity.entries import ERROR_MAX_CHARS, REF_MAX_CHARS, prepare_entry
from sidemirror.mcp.endpoint import MCP_SESSIONS

from tests.harness.auth import AUTH
from tests.server.support import ClientFactory, ingest, state_of

JSON = {**AUTH, "Content-Type": "application/json"}
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
MARK = "[REDACTED:"


def straddling(secret: str, cap: int) -> str:
    """Text in which `secret` sits across position `cap`."""
    return "x" * (cap - len(secret) // 2 - 1) + " " + secret


def test_a_url_with_secret_parameters_in_args_is_redacted_like_url() -> None:
    url = "https://shop.test/login?token=abc123def&api_key=k3y&page=2"
    entry, _ = prepare_entry({"command": "goto", "args": [url], "url": url})
    assert entry.args == [entry.url]
    assert "abc123def" not in entry.args[0] and "k3y" not in entry.args[0]
    assert "page=2" in entry.args[0]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("command", f"deploy {AWS}"),
        ("request_id", f"req {GH}"),
        ("source", f"bot {AWS}"),
        ("tab_id", f"tab {AWS}"),
        ("result", f"ok {AWS}"),
        ("error", f"failed with {AWS}"),
        ("url", f"https://a.test/{AWS}/x"),
    ],
)
def test_every_string_field_of_an_entry_is_redacted(field: str, value: str) -> None:
    entry, _ = prepare_entry({"command": "click", field: value})
    shown = entry.model_dump_json()
    assert AWS not in shown and GH not in shown and MARK in shown


def test_refs_are_redacted_in_every_field() -> None:
    ref = {"ref": f"e1 {AWS}", "role": f"button {AWS}", "name": f"Sign in {AWS}",
           "selector": f"#x[data-k='{AWS}']"}  # fmt: skip
    entry, _ = prepare_entry({"command": "snapshot", "refs": [ref]})
    assert AWS not in entry.model_dump_json()


@pytest.mark.parametrize(
    ("field", "cap"), [("error", ERROR_MAX_CHARS), ("url", 8192), ("request_id", 200)]
)
def test_a_field_is_redacted_before_it_is_cut(field: str, cap: int) -> None:
    entry, _ = prepare_entry({"command": "click", field: straddling(GH, cap)})
    shown = entry.model_dump_json()
    assert GH[:12] not in shown  # no prefix left behind by the cut
    assert "[REDACTED:github" in shown  # the marker itself may be what the cut shortened


def test_a_ref_name_is_redacted_before_it_is_cut() -> None:
    ref = {"ref": "e1", "name": straddling(GH, REF_MAX_CHARS)}
    entry, _ = prepare_entry({"command": "snapshot", "refs": [ref]})
    assert GH[:12] not in entry.refs[0].name and "[REDACTED:" in entry.refs[0].name


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("browser_fill_form", [[{"name": "Password", "type": "textbox", "ref": "e3",
                                 "value": "hunter2"}]]),
        ("mcp__playwright__browser_type", [{"element": "Password", "ref": "e5",
                                            "text": "hunter2"}]),
        ("fill", ["@e5", "hunter2"]),
        ("fill @e5 hunter2", []),
        ("keyboard.type", ["hunter2"]),
        ("page.getByLabel('Password').fill('hunter2')", []),
    ],
)  # fmt: skip
def test_typed_values_never_show(command: str, args: list[Any]) -> None:
    entry, _ = prepare_entry({"command": command, "args": args})
    shown = entry.model_dump_json()
    assert "hunter2" not in shown and "[REDACTED:typed]" in shown
    if command.startswith(("browser_fill_form", "mcp__")):
        assert '"ref":"e' in shown.replace('\\"', '"')  # the targets stay readable


def test_an_error_message_quoting_a_value_is_redacted_then_cut() -> None:
    with pytest.raises(ValueError) as caught:
        prepare_entry({"command": "x", "status": straddling(GH, 30)})
    assert GH[:12] not in str(caught.value)


async def test_ingested_ids_paths_and_models_never_hold_a_secret(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client = await make_client()
    items = [
        {"type": "tool_use", "tool_use_id": f"t {AWS}", "name": f"n {AWS}", "input": "ls"},
        {"type": "turn_complete", "turn": 1, "model": f"claude {AWS}"},
    ]
    await ingest(client, items, workspace=f"/home/dev/{AWS}/p", session=f"s {AWS}")
    listing = await (await client.get("/api/workspaces", headers=AUTH)).text()
    ws = json.loads(listing)["workspaces"][0]
    sessions = await (await client.get(f"/workspace/{ws['id']}/sessions", headers=AUTH)).text()
    session = json.loads(sessions)["sessions"][0]["id"]
    snap = await (await client.get(f"/workspace/{ws['id']}/session", headers=AUTH,
                                   params={"session": session})).text()  # fmt: skip
    journals = "".join(p.read_text() for p in (tmp_path / "data").rglob("*.jsonl"))
    for shown in (listing, sessions, snap, journals):
        assert AWS not in shown and MARK in shown


async def test_refusals_never_echo_a_secret(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "x"}])
    ws = next(iter(state_of(client).store.workspaces))
    resp = await client.get(f"/workspace/{ws}/session", params={"session": AWS}, headers=AUTH)
    assert resp.status == 404 and AWS not in await resp.text()
    resp = await client.post("/api/activity", data=json.dumps({"command": "x", "status": AWS}),
                             headers=JSON)  # fmt: skip
    assert resp.status == 400 and AWS not in await resp.text()


async def _mcp(client: TestClient[Any, Any], body: dict[str, Any], sid: str = "") -> Any:
    headers = {**JSON, "Accept": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    if sid:
        headers["Mcp-Session-Id"] = sid
    resp = await client.post("/mcp", data=json.dumps(body), headers=headers)
    return resp.headers.get("Mcp-Session-Id", sid), await resp.text()


async def test_mcp_inputs_and_client_name_are_redacted(make_client: ClientFactory) -> None:
    client = await make_client()
    sid, _ = await _mcp(client, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "clientInfo": {"name": f"agent {AWS}"}}})  # fmt: skip
    table = client.server.app[MCP_SESSIONS]
    assert AWS not in table.get(sid).client  # type: ignore[union-attr]
    answers = []
    for name, arguments in (
        ("sidemirror_get_session", {"workspace": f"/w/{AWS}", "session": AWS}),
        ("sidemirror_get_activity", {"workspace": f"/w/{AWS}"}),
        ("sidemirror_report_browser_action", {"command": f"goto {AWS}", "url": AWS,
                                              "args": ["fill", "@e1", "hunter2"]}),
        (f"tool {AWS}", {}),
    ):  # fmt: skip
        _, text = await _mcp(client, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": {"name": name, "arguments": arguments}}, sid)  # fmt: skip
        answers.append(text)
    _, text = await _mcp(client, {"jsonrpc": "2.0", "id": 2, "method": AWS}, sid)
    answers.append(text)
    assert all(AWS not in a for a in answers), answers
    assert sum(MARK in a for a in answers) >= 4, answers
