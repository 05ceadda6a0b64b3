"""Reading a session back with `before=`: every item exactly once, in order, as a whole parse.

The transcript is a real session (sample-project/fe5e1c67…) run again and again until it passes
the size from which the server reads only its end; the rest (`skipped_bytes`) is read on demand
as a client pages into it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.server.sources.claude.test_tail_load import (
    SID,
    dump,
    wait_listed,
    whole_parse,
    write_big,
)
from tests.server.support import ClientFactory, ingest, state_of


async def get(client: Any, path: str, **params: str) -> tuple[int, dict[str, Any]]:
    resp = await client.get(path, params=params, headers=AUTH)
    return resp.status, await resp.json()


async def huge_session(
    make_client: ClientFactory, tmp_path: Path
) -> tuple[Any, str, Path, dict[str, Any]]:
    """A server reading a huge transcript: its client, the session route, the file, and a
    snapshot of 200 items (the rest of the file skipped, read on demand)."""
    path = write_big(tmp_path / "projects")
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    route = await session_route(client)
    status, snap = await get(client, route, session=SID, limit="200")
    assert status == 200 and snap["skipped_bytes"] > 0
    return client, route, path, snap


async def session_route(client: Any) -> str:
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]
    return f"/workspace/{ws['id']}/session"


def assert_whole(client: Any, path: Path, got: list[dict[str, Any]], epoch: str) -> None:
    """Every item once, in order, equal to a parse from byte 0 (turns are numbered only by a
    parse from the start of the file), each with its id in the session's epoch."""
    projector = state_of(client).store.projector
    whole = [json.loads(projector.to_json(i)) for i in whole_parse(path)]
    assert len(got) == len(whole) > 3_000
    assert [dump(i) for i in got] == [dump(i) for i in whole]
    assert [i["id"] for i in got] == [f"{epoch}.{i['seq']}" for i in whole]


async def test_paging_back_through_a_huge_transcript_gives_every_item_of_a_whole_parse(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client, route, path, snap = await huge_session(make_client, tmp_path)
    pages = [snap["items"]]
    has_more = True
    while has_more:
        status, page = await get(client, route, session=SID, before=pages[-1][0]["id"], limit="700")
        assert status == 200, page
        assert page["items"], "has_more promised items that never came"
        assert len(page["items"]) == 700 or not page["has_more"]
        pages.append(page["items"])
        has_more = page["has_more"]
    got = [item for page in reversed(pages) for item in page]

    assert_whole(client, path, got, snap["epoch"])

    # An item paged back to from the unread part is whole through "show more" too.
    early = got[3]
    resp = await client.get(f"{route}/items/{early['id']}", params={"session": SID}, headers=AUTH)
    assert resp.status == 200
    assert (await resp.json())["seq"] == early["seq"]
    await client.close()


async def counted_prompts(make_client: ClientFactory) -> tuple[Any, str]:
    """An ingested session of 25 prompts, "prompt 1" to "prompt 25": its client and route."""
    client = await make_client()
    lines = [{"type": "user", "content": f"prompt {n}"} for n in range(1, 26)]
    await ingest(client, lines, session="s1")
    return client, await session_route(client)


async def test_paging_an_ingested_session_and_refusing_ids_it_does_not_hold(
    make_client: ClientFactory,
) -> None:
    client, route = await counted_prompts(make_client)
    status, snap = await get(client, route, session="s1", limit="5")
    assert [i["content"] for i in snap["items"]] == [f"prompt {n}" for n in range(21, 26)]

    status, page = await get(client, route, session="s1", before=snap["items"][0]["id"], limit="8")
    assert status == 200 and page["has_more"] is True
    assert [i["content"] for i in page["items"]] == [f"prompt {n}" for n in range(13, 21)]
    status, page = await get(client, route, session="s1", before=page["items"][0]["id"], limit="50")
    assert page["has_more"] is False
    assert [i["content"] for i in page["items"]] == [f"prompt {n}" for n in range(1, 13)]
    status, page = await get(client, route, session="s1", before=page["items"][0]["id"])
    assert (status, page["items"], page["has_more"]) == (200, [], False)

    epoch = snap["epoch"]
    for bad in (f"other.{snap['items'][0]['seq']}", f"{epoch}.999", f"{epoch}.x", "nonsense"):
        status, body = await get(client, route, session="s1", before=bad)
        assert status == 404, (bad, body)
        assert "error" in body
    status, body = await get(client, route, session="s1", before=snap["items"][0]["id"], limit="0")
    assert status == 400 and "limit" in body["error"]["message"]
    await client.close()
