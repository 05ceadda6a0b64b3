"""Search: a word from a session nobody opened is found (with an id that names its item), a
line appended while the server runs is found as soon as it is written, one session is searched
whole (the unread part of a huge transcript too), and a bad query is a clear 400."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.harness.paths import FIXTURES
from tests.server.sources.claude.test_tail_load import wait_listed
from tests.server.support import ClientFactory
from tests.transcripts import rerun

SAMPLE = FIXTURES / "claude" / "sample-project"
TODO = SAMPLE / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
ORCH = SAMPLE / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"


async def get(client: Any, path: str, **params: str) -> tuple[int, dict[str, Any]]:
    resp = await client.get(path, params=params, headers=AUTH)
    return resp.status, await resp.json()


async def search_when_open(client: Any, path: str, **params: str) -> tuple[int, dict[str, Any]]:
    """A search, once the index file is open (it opens in the background at start: 503)."""
    for _ in range(400):
        status, body = await get(client, path, **params)
        if status != 503:
            return status, body
        assert body["error"]["code"] == "index_starting"
        await asyncio.sleep(0.05)
    raise AssertionError("the search index never opened")


async def wait_for_hits(client: Any, path: str, **params: str) -> list[dict[str, Any]]:
    """Polls until the search answers something (the index fills in the background)."""
    for _ in range(400):
        status, body = await search_when_open(client, path, **params)
        assert status == 200, body
        if body["hits"]:
            hits: list[dict[str, Any]] = body["hits"]
            return hits
        await asyncio.sleep(0.05)
    raise AssertionError(f"no hit for {params} in 20 s")


def projects_with(tmp_path: Path, *sessions: Path) -> Path:
    project = tmp_path / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    for session in sessions:
        shutil.copyfile(session, project / session.name)
    return project


async def test_a_never_opened_session_is_found_and_new_lines_within_a_batch(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    project = projects_with(tmp_path, TODO, ORCH)
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    # A word of the orchestrator session's prompt (`/orchestrator`, a slash command).
    hits = await wait_for_hits(client, "/api/search", q="orchestrator")
    assert {h["session"] for h in hits} >= {ORCH.stem}
    ws = hits[0]["workspace"]
    status, listing = await get(client, f"/workspace/{ws}/sessions")
    never_opened = {s["id"] for s in listing["sessions"] if s["items"] is None}
    assert ORCH.stem in never_opened  # indexed without being loaded
    hit = next(h for h in hits if h["session"] == ORCH.stem)
    assert set(hit) == {"workspace", "session", "item_id", "type", "ts", "snippet", "matches"}
    assert "orchestrator" in hit["snippet"].lower() and len(hit["snippet"]) <= 500
    # The id names the item the hit came from, once the session is read.
    status, item = await get(
        client, f"/workspace/{ws}/session/items/{hit['item_id']}", session=hit["session"]
    )
    assert status == 200 and item["type"] == hit["type"] and item["ts"] == hit["ts"]
    assert "orchestrator" in json.dumps(item).lower()
    # Newest first.
    stamps = [h["ts"] for h in hits]
    assert stamps == sorted(stamps, reverse=True)

    # A line appended while the server follows the file is searchable once written.
    record = json.loads(rerun(TODO.read_bytes(), 77, TODO.stem).split(b"\n")[1])
    record["message"]["content"] = "please add a quixotically named helper"
    with open(project / TODO.name, "ab") as fh:
        fh.write(json.dumps(record).encode() + b"\n")
    hits = await wait_for_hits(client, "/api/search", q="quixotically")
    assert [(h["session"], h["type"]) for h in hits] == [(TODO.stem, "user")]
    # Narrowed to a workspace: its id or its directory.
    assert (await wait_for_hits(client, "/api/search", q="quixotically", workspace=ws)) == hits
    status, body = await get(client, "/api/search", q="quixotically", workspace="/elsewhere")
    assert (status, body) == (200, {"hits": [], "total": 0})
    await client.close()


async def test_one_session_is_searched_whole_even_its_unread_part(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    from sidemirror.sources.claude.sync import TAIL_FROM_BYTES

    project = tmp_path / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    base = TODO.read_bytes()
    with open(project / TODO.name, "wb") as fh:  # a word only in the first run's first prompt
        fh.write(base.replace(b"create TODO app by Next.js", b"create TODO app by zanzibar", 1))
        n = 1
        while fh.tell() < TAIL_FROM_BYTES + (2 << 20):
            fh.write(rerun(base, n, TODO.stem))
            n += 1
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]["id"]
    status, snap = await get(client, f"/workspace/{ws}/session", session=TODO.stem, limit="1")
    assert snap["skipped_bytes"] > 0
    status, body = await search_when_open(
        client, f"/workspace/{ws}/search", q="zanzibar", session=TODO.stem
    )
    assert status == 200, body
    (hit,) = body["hits"]
    assert hit["session"] == TODO.stem and "zanzibar" in hit["snippet"]
    # The id is one `before=` paging reaches, and the item route reads it from the unread part.
    assert int(hit["item_id"].rpartition(".")[2]) < snap["skipped_bytes"] * 65536
    status, item = await get(
        client, f"/workspace/{ws}/session/items/{hit['item_id']}", session=TODO.stem
    )
    assert status == 200 and "zanzibar" in item["content"]
    await client.close()


async def test_bad_queries_are_clear_400s(make_client: ClientFactory, tmp_path: Path) -> None:
    projects_with(tmp_path, ORCH)
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    # Only FTS5 syntax, asked for, can be malformed; typed as text, the same is searched.
    for q in ('"unclosed', "AND OR", "foo("):
        status, body = await search_when_open(client, "/api/search", q=q, syntax="fts")
        assert status == 400, (q, body)
        assert (
            body["error"]["code"] == "bad_query"
            and "not a valid search" in body["error"]["message"]
        )
        status, body = await search_when_open(client, "/api/search", q=q)
        assert status == 200 and body["total"] == len(body["hits"]), (q, body)
    status, body = await get(client, "/api/search", q="x", syntax="sql")
    assert status == 400 and "'syntax'" in body["error"]["message"]
    status, body = await get(client, "/api/search")
    assert (status, body) == (200, {"hits": [], "total": 0})
    status, body = await get(client, "/api/search", q="x", limit="0")
    assert status == 400
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]["id"]
    status, body = await get(client, f"/workspace/{ws}/search", q="x", session="nope")
    assert status == 404
    await client.close()
