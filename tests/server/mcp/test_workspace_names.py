"""`sidemirror_get_session` takes a workspace by id, directory or name (issue 33): agents know a
project by its name, not by the id the server hashed from its directory."""

from __future__ import annotations

from typing import Any

from tests.server.mcp.test_endpoint import assert_structured, call, open_session
from tests.server.support import ClientFactory, ingest, state_of

NAME = "sidemirror_get_session"


def text_of(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    return str(result["content"][0]["text"])


async def test_a_workspace_is_found_by_id_directory_or_name(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "in api"}], workspace="/home/dev/api")
    await ingest(client, [{"type": "user", "content": "in web"}], workspace="/home/dev/Web")
    sid = await open_session(client)
    api = next(w for w in state_of(client).store.workspaces.values() if w.name == "api")
    for given in (api.id, "/home/dev/api", "/home/dev/api/", "api", "API"):
        out = assert_structured(await call(client, sid, NAME, {"workspace": given}), NAME)
        assert out["workspace"] == api.id, given
        assert [i["content"] for i in out["items"]] == ["in api"], given
    out = assert_structured(await call(client, sid, NAME, {"workspace": "web"}), NAME)
    assert [i["content"] for i in out["items"]] == ["in web"]


async def test_a_shared_name_is_an_error_listing_every_candidate(
    make_client: ClientFactory,
) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "one"}], workspace="/home/dev/a/app")
    await ingest(client, [{"type": "user", "content": "two"}], workspace="/srv/b/app")
    sid = await open_session(client)
    message = text_of(await call(client, sid, NAME, {"workspace": "app"}))
    assert "ambiguous" in message
    for ws in state_of(client).store.workspaces.values():
        assert ws.id in message and ws.directory in message
    # Either one is still reachable by its directory.
    out = assert_structured(await call(client, sid, NAME, {"workspace": "/srv/b/app"}), NAME)
    assert [i["content"] for i in out["items"]] == ["two"]


async def test_an_unknown_name_says_what_was_tried(make_client: ClientFactory) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": "hi"}], workspace="/home/dev/api")
    sid = await open_session(client)
    message = text_of(await call(client, sid, NAME, {"workspace": "nope"}))
    assert "unknown workspace 'nope'" in message and "sidemirror_list_workspaces" in message
