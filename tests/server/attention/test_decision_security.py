"""Who may decide: the token and the panel credential (an `@panel` route), and an id that is
pending. The runtime-file token reads and reports; with any Origin it still cannot decide."""

from __future__ import annotations

from pathlib import Path

from sidemirror.panel_credential import PANEL_HEADER

from tests.harness.auth import AUTH
from tests.harness.waiting import until
from tests.server.attention.hook_support import HookServer, event, finish, hook_server
from tests.server.support import EXT_ORIGIN, ClientFactory, panel_headers


async def _pending_id(server: HookServer) -> str | None:
    rows = (await server.get("/api/decisions"))["decisions"]
    return rows[0]["id"] if rows else None


async def test_decisions_need_the_panel_credential_and_a_pending_id(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))
    request_id = await until(lambda: _pending_id(server))
    url = f"/api/decisions/{request_id}"
    allow = {"behavior": "allow"}
    post = server.client.post
    panel = panel_headers(server.client)
    no_token = await post(url, json=allow, headers={PANEL_HEADER: panel[PANEL_HEADER]})
    assert no_token.status == 401
    no_panel = await post(url, json=allow, headers=AUTH)
    assert no_panel.status == 403
    wrong = await post(url, json=allow, headers={**AUTH, PANEL_HEADER: "x" * 43})
    assert (await wrong.json())["error"]["code"] == "panel_credential_required"
    other = await post(
        url, json=allow, headers={**panel, "Origin": "chrome-extension://" + "a" * 32}
    )
    assert other.status == 403
    page = await post(url, json=allow, headers={**panel, "Origin": "https://evil.example"})
    assert page.status == 403
    unknown = await post("/api/decisions/nope", json=allow, headers=panel)
    assert unknown.status == 404
    bad = await post(url, json={"behavior": "maybe"}, headers=panel)
    assert bad.status == 400
    listing = await server.client.get("/api/decisions")
    assert listing.status == 401
    assert proc.returncode is None  # none of these decided anything

    ok = await post(url, json={"behavior": "deny"}, headers={**panel, "Origin": EXT_ORIGIN})
    assert ok.status == 200
    code, out = await finish(proc)
    assert code == 0 and '"deny"' in out
    again = await post(url, json=allow, headers=panel)
    assert again.status == 409


async def test_the_token_with_a_forged_extension_origin_cannot_decide(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    """Finding 6: `curl` with the runtime-file token and `Origin: chrome-extension://<id>`
    approved a held request. An Origin header is a string any process can send."""
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))
    request_id = await until(lambda: _pending_id(server))
    forged = {**AUTH, "Origin": EXT_ORIGIN}
    for behavior in ("allow", "deny"):
        resp = await server.client.post(
            f"/api/decisions/{request_id}", json={"behavior": behavior}, headers=forged
        )
        assert resp.status == 403
        assert (await resp.json())["error"]["code"] == "panel_credential_required"
    # The hook still waits, and the request is still pending for the panel.
    assert proc.returncode is None
    assert await _pending_id(server) == request_id
    proc.kill()
    await proc.wait()


async def test_hook_events_need_the_token(make_client: ClientFactory, tmp_path: Path) -> None:
    server = await hook_server(make_client, tmp_path)
    resp = await server.client.post("/api/hooks/claude", json=event("SessionStart"))
    assert resp.status == 401
    bad = await server.client.post("/api/hooks/claude", json={"cwd": "/x"}, headers=AUTH)
    assert bad.status == 400
