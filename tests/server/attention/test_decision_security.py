"""Who may decide: the token, an extension Origin that is allowed, and an id that is pending."""

from __future__ import annotations

from pathlib import Path

from tests.server.attention.hook_support import event, finish, hook_server, until
from tests.server.conftest import AUTH, EXT_ORIGIN, ClientFactory


async def test_decisions_need_token_paired_origin_and_a_pending_id(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    server = await hook_server(make_client, tmp_path)
    proc = await server.start_hook(event("PermissionRequest"))

    async def pending_id() -> str | None:
        rows = (await server.get("/api/decisions"))["decisions"]
        return rows[0]["id"] if rows else None

    request_id = await until(pending_id)
    url = f"/api/decisions/{request_id}"
    allow = {"behavior": "allow"}
    post = server.client.post
    no_token = await post(url, json=allow, headers={"Origin": EXT_ORIGIN})
    assert no_token.status == 401
    no_origin = await post(url, json=allow, headers=AUTH)
    assert no_origin.status == 403
    other = await post(
        url, json=allow, headers={**AUTH, "Origin": "chrome-extension://" + "a" * 32}
    )
    assert other.status == 403
    page = await post(url, json=allow, headers={**AUTH, "Origin": "https://evil.example"})
    assert page.status == 403
    unknown = await post("/api/decisions/nope", json=allow, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert unknown.status == 404
    bad = await post(url, json={"behavior": "maybe"}, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert bad.status == 400
    listing = await server.client.get("/api/decisions")
    assert listing.status == 401
    assert proc.returncode is None  # none of these decided anything

    ok = await post(url, json={"behavior": "deny"}, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert ok.status == 200
    code, out = await finish(proc)
    assert code == 0 and '"deny"' in out
    again = await post(url, json=allow, headers={**AUTH, "Origin": EXT_ORIGIN})
    assert again.status == 409


async def test_hook_events_need_the_token(make_client: ClientFactory, tmp_path: Path) -> None:
    server = await hook_server(make_client, tmp_path)
    resp = await server.client.post("/api/hooks/claude", json=event("SessionStart"))
    assert resp.status == 401
    bad = await server.client.post("/api/hooks/claude", json={"cwd": "/x"}, headers=AUTH)
    assert bad.status == 400
