"""Going to the start of a session in one request (`from=start`) and reading on down from there
(`after=`): every item exactly once, in order, as a whole parse, including the skipped part of
a huge transcript that the server reads forward from byte 0 on demand (issue 33)."""

from __future__ import annotations

from pathlib import Path

from tests.server.review.test_paging import assert_whole, counted_prompts, get, huge_session
from tests.server.sources.claude.test_tail_load import SID
from tests.server.support import ClientFactory


async def test_reading_a_huge_transcript_forward_from_its_start_gives_a_whole_parse(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client, route, path, snap = await huge_session(make_client, tmp_path)
    status, first = await get(client, route, session=SID, **{"from": "start"}, limit="700")
    assert status == 200 and first["has_more"] is True
    pages = [first["items"]]
    has_more = True
    while has_more:
        status, page = await get(client, route, session=SID, after=pages[-1][-1]["id"], limit="700")
        assert status == 200, page
        assert page["items"], "has_more promised items that never came"
        assert len(page["items"]) == 700 or not page["has_more"]
        pages.append(page["items"])
        has_more = page["has_more"]
    assert_whole(client, path, [item for page in pages for item in page], snap["epoch"])
    await client.close()


async def test_forward_paging_of_an_ingested_session_and_its_refusals(
    make_client: ClientFactory,
) -> None:
    client, route = await counted_prompts(make_client)
    status, page = await get(client, route, session="s1", **{"from": "start"}, limit="10")
    assert status == 200 and page["has_more"] is True and page["total"] == 25
    assert [i["content"] for i in page["items"]] == [f"prompt {n}" for n in range(1, 11)]
    status, page = await get(client, route, session="s1", after=page["items"][-1]["id"], limit="10")
    assert [i["content"] for i in page["items"]] == [f"prompt {n}" for n in range(11, 21)]
    status, page = await get(client, route, session="s1", after=page["items"][-1]["id"], limit="10")
    assert page["has_more"] is False
    assert [i["content"] for i in page["items"]] == [f"prompt {n}" for n in range(21, 26)]
    status, page = await get(client, route, session="s1", after=page["items"][-1]["id"])
    assert (status, page["items"], page["has_more"]) == (200, [], False)

    epoch = page["epoch"]
    for bad in ("other.3", f"{epoch}.999", f"{epoch}.x", "nonsense"):
        status, body = await get(client, route, session="s1", after=bad)
        assert status == 404, (bad, body)
    for params in ({"from": "end"}, {"from": "start", "after": f"{epoch}.1"}):
        status, body = await get(client, route, session="s1", **params)
        assert status == 400, (params, body)
    await client.close()
