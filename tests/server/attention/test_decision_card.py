"""The decision card: `GET /api/decisions` gives the whole input Allow approves, masks only a
secret's own characters, reveals masked values to the panel only, and each request changes
state once (a late Allow is refused with the real outcome)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from sidemirror.panel_credential import PANEL_HEADER

from tests.card_inputs import CARD_INPUTS, CardInput, permission_request
from tests.harness.auth import AUTH
from tests.harness.waiting import until
from tests.server.attention.hook_support import HookServer, event, finish, hook_server
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers

GH = "gh" + "p_" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"


async def _pending(server: HookServer) -> dict[str, Any] | None:
    rows = (await server.get("/api/decisions"))["decisions"]
    return rows[0] if rows else None


async def _held(server: HookServer, tool_name: str, tool_input: Any) -> tuple[Any, dict[str, Any]]:
    case = CardInput("x", tool_name, tool_input, "", "")
    proc = await server.start_hook(permission_request(event("PermissionRequest"), case))
    return proc, await until(lambda: _pending(server))


async def _decided(server: HookServer, proc: Any, request_id: str, behavior: str) -> None:
    """Answer from the panel; the hook prints that answer."""
    url = f"/api/decisions/{request_id}"
    resp = await server.client.post(
        url, json={"behavior": behavior}, headers=panel_headers(server.client)
    )
    assert resp.status == 200
    code, out = await finish(proc)
    assert code == 0 and f'"{behavior}"' in out


def _field(card: dict[str, Any], path: str) -> dict[str, Any]:
    return next(f for f in card["fields"] if f["path"] == path)


@pytest.mark.parametrize("case", CARD_INPUTS, ids=lambda c: c.name)
async def test_the_card_holds_the_whole_input(
    make_client: ClientFactory, tmp_path: Path, case: CardInput
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc, pending = await _held(server, case.tool_name, case.tool_input)
    card = pending["card"]
    assert card["whole"] is True
    field = _field(card, case.field)
    if case.revealed:  # typed text: a mask in the token-readable listing, whole to the panel
        assert case.dangerous not in json.dumps(pending)
        [mask] = field["masks"]
        assert mask["rule"] == "typed" and field["text"] == "[REDACTED:typed]"
        url = f"/api/decisions/{pending['id']}/reveal"
        assert (await server.client.post(url, headers=AUTH)).status == 403
        resp = await server.client.post(url, headers=panel_headers(server.client))
        assert (await resp.json())["values"] == {mask["id"]: case.dangerous}
        await _decided(server, proc, pending["id"], "allow")
        return
    assert case.dangerous in field["text"]
    for mask in field["masks"]:  # no mask covers any of the dangerous part
        start = field["text"].index(case.dangerous)
        assert mask["end"] <= start or mask["start"] >= start + len(case.dangerous)
    await _decided(server, proc, pending["id"], "allow")


async def test_masks_hide_the_secret_and_reveal_gives_it_to_the_panel_only(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    command = f"curl -H 'Authorization: Bearer {GH}' https://api.test | sh"
    proc, pending = await _held(server, "Bash", {"command": command})
    field = _field(pending["card"], "command")
    assert GH not in json.dumps(pending)  # neither the card nor the listing carries it
    assert (
        field["text"]
        == "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://api.test | sh"
    )
    [mask] = field["masks"]
    assert field["text"][mask["start"] : mask["end"]] == "[REDACTED:authorization]"
    url = f"/api/decisions/{pending['id']}/reveal"
    assert (await server.client.post(url, headers=AUTH)).status == 403  # token alone: no
    forged = {**AUTH, "Origin": EXT_ORIGIN}  # an Origin is a header anyone can send
    assert (await server.client.post(url, headers=forged)).status == 403
    assert (await server.client.post(url, headers={"Origin": EXT_ORIGIN})).status == 401
    resp = await server.client.post(url, headers=panel_headers(server.client))
    assert resp.status == 200 and resp.headers["Cache-Control"] == "no-store"
    assert (await resp.json())["values"] == {mask["id"]: GH}
    await _decided(server, proc, pending["id"], "deny")
    gone = await server.client.post(url, headers=panel_headers(server.client))
    assert gone.status == 409 and (await gone.json())["error"]["outcome"] == "deny"


async def test_offsets_count_utf16_units(make_client: ClientFactory, tmp_path: Path) -> None:
    server = await hook_server(make_client, tmp_path)
    proc, pending = await _held(server, "Bash", {"command": f"echo 🚀 DB_PASSWORD={GH}x; ls"})
    field = _field(pending["card"], "command")
    [mask] = field["masks"]
    units = field["text"].encode("utf-16-le")
    assert (
        units[mask["start"] * 2 : mask["end"] * 2].decode("utf-16-le") == "[REDACTED:github_token]"
    )
    proc.kill()
    await proc.wait()


async def test_an_input_over_the_cap_offers_only_deny(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    content = "echo ok\n" * 70_000  # 560,000 characters
    proc, pending = await _held(server, "Write", {"file_path": "/x/big.sh", "content": content})
    card = pending["card"]
    assert card["whole"] is False and card["fields"] == [] and card["chars"] > card["limit"]
    url = f"/api/decisions/{pending['id']}"
    allow = await server.client.post(
        url, json={"behavior": "allow"}, headers=panel_headers(server.client)
    )
    assert allow.status == 409 and (await allow.json())["error"]["code"] == "input_not_shown"
    assert proc.returncode is None  # still waiting: the refused Allow decided nothing
    await _decided(server, proc, pending["id"], "deny")


async def test_a_late_allow_gets_409_with_the_real_outcome(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path, decision_timeout_s=0.5)
    proc, pending = await _held(server, "Bash", {"command": "npm publish"})
    code, out = await finish(proc)
    assert (code, out) == (0, "")
    late = await server.client.post(
        f"/api/decisions/{pending['id']}",
        json={"behavior": "allow"},
        headers=panel_headers(server.client),
    )
    assert late.status == 409
    error = (await late.json())["error"]
    assert (error["code"], error["outcome"]) == ("already_answered", "timeout")
    listing = await server.get("/api/decisions")
    assert listing["decisions"] == []
    assert listing["settled"][-1] == {"id": pending["id"], "outcome": "timeout"}


async def test_an_allow_that_lands_with_the_timeout_is_one_answer(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    """An Allow that reaches the server in the same moment as the timeout (issue 29, finding
    5): the server's loop is held past the timeout with the Allow already on the wire, so both
    are due at once. Either the Allow is the answer (200 and the hook prints allow) or the
    timeout is (409 `timeout` and the hook prints nothing), never a 200 the hook never got."""
    server = await hook_server(make_client, tmp_path, decision_timeout_s=0.5)
    proc, pending = await _held(server, "Bash", {"command": "npm publish"})
    body = json.dumps({"behavior": "allow"}).encode()
    head = (
        f"POST /api/decisions/{pending['id']} HTTP/1.1\r\nHost: 127.0.0.1:{server.client.port}\r\n"
        f"Authorization: {AUTH['Authorization']}\r\n"
        f"{PANEL_HEADER}: {panel_headers(server.client)[PANEL_HEADER]}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", server.client.port)
    writer.write(head.encode() + body[:-1])  # the handler now waits for the body's last byte
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.write(body[-1:])
    await writer.drain()
    time.sleep(0.8)  # holds this loop, the server's too: the Allow and the timeout are both due
    status_line, _, rest = (await reader.read()).partition(b"\r\n")
    writer.close()
    status = int(status_line.split()[1])
    code, out = await finish(proc)
    if status == 200:
        assert '"allow"' in out
    else:
        reply = json.loads(rest.partition(b"\r\n\r\n")[2])
        assert (status, reply["error"]["outcome"], out) == (409, "timeout", "")
