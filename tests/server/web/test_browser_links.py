"""browser-link: a recorded Claude session's Playwright MCP calls are linked to exactly the
activity entries of their workspace inside each call's window; the link is on the entries the
activity stream sends, on `GET …/items/{id}/activity`, and survives a restart."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from sidemirror.activity.links import MAX_LOADS_TO_ANNOTATE

from tests.harness.auth import AUTH
from tests.server.helpers.browser_session import (
    CALLS,
    CWD,
    PLAN,
    SESSION,
    TOOL_IDS,
    activity_body,
    expected_counts,
    iso,
    session_base,
    transcript_lines,
    write_transcript,
)
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory, state_of


async def load_session(client: Any) -> dict[str, Any]:
    """The session's snapshot, once the transcript has been indexed and every call read."""
    for _ in range(400):
        resp = await client.get("/api/workspaces", headers=AUTH)
        listed = [w for w in (await resp.json())["workspaces"] if w["directory"] == CWD]
        if listed:
            snap = await (await client.get(f"/workspace/{listed[0]['id']}/session",
                                           headers=AUTH)).json()  # fmt: skip
            results = [i for i in snap["items"] if i["type"] == "tool_result"]
            if len(results) == len(CALLS):
                return dict(snap)
        await asyncio.sleep(0.05)
    raise AssertionError("the transcript was never read whole")


def use_items(snap: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by_id = {i["tool_use_id"]: i for i in snap["items"] if i["type"] == "tool_use"}
    return {c.key: by_id[TOOL_IDS[c.key]] for c in CALLS}


async def call_activity(client: Any, ws: str, item_id: str) -> dict[str, Any]:
    resp = await client.get(f"/workspace/{ws}/session/items/{item_id}/activity", headers=AUTH)
    assert resp.status == 200, await resp.text()
    return dict(await resp.json())


async def check_links(client: Any, snap: dict[str, Any]) -> None:
    ws = snap["workspace"]
    items = use_items(snap)
    expected = expected_counts()
    by_error = {raw.get("error") or raw.get("url"): key for raw, key in PLAN}
    for key, item in items.items():
        body = await call_activity(client, ws, item["id"])
        assert len(body["entries"]) == expected[key], (key, body["entries"])
        assert all(e["tool_use_id"] == TOOL_IDS[key] for e in body["entries"])
        assert all(by_error[e.get("error") or e.get("url")] == key for e in body["entries"]
                   if e["command"] != "screenshot")  # fmt: skip
        assert body["browser"] == (expected[key] > 0 or "playwright" in item["name"])
    nav = await call_activity(client, ws, items["nav"]["id"])
    summary = nav["summary"]
    assert (summary["where"], summary["console_errors"], summary["failed_requests"]) == (
        "/dashboard",
        2,
        1,
    )
    assert nav["label"] == "navigate http://localhost:3000/dashboard" and nav["turn"] == 1
    click = await call_activity(client, ws, items["click"]["id"])
    assert click["label"] == "click e5"
    # The tool_result's id answers the same as the tool_use's.
    result = next(i for i in snap["items"]
                  if i["type"] == "tool_result" and i["tool_use_id"] == TOOL_IDS["click"])  # fmt: skip
    assert (await call_activity(client, ws, result["id"]))["entries"] == click["entries"]


async def test_calls_link_exactly_the_entries_in_their_window(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    base = session_base()
    write_transcript(projects, base)
    client = await make_client(claude_dirs=[projects])
    snap = await load_session(client)
    resp = await client.post("/api/activity", json=activity_body(base), headers=AUTH)
    assert resp.status == 200 and (await resp.json())["accepted"] == len(PLAN) + 1
    await check_links(client, snap)

    # The activity stream sends each entry with its link (and leaves the others alone).
    stream = await client.get("/activity/stream", params={"workspace": CWD}, headers=AUTH)
    reader = SSEReader(stream)
    sent = [(await asyncio.wait_for(reader.event(), 10)).data for _ in PLAN]
    stream.close()
    items = use_items(snap)
    for entry, (raw, key) in zip(sent, sorted(PLAN, key=lambda p: p[0]["at"]), strict=True):
        assert entry["command"] == raw["command"]
        if key is None:
            assert "tool_use_id" not in entry and "link" not in entry
        else:
            assert entry["tool_use_id"] == TOOL_IDS[key]
            assert entry["link"]["item_id"] == items[key]["id"]
            assert entry["link"]["session"] == snap["session"] and entry["link"]["turn"] == 1
    click_entry = next(e for e in sent if e.get("error") == "Login failed")
    assert click_entry["link"]["label"] == "click e5"

    # Not a tool call, and an unknown item: clear 404s.
    user = next(i for i in snap["items"] if i["type"] == "user")
    resp = await client.get(f"/workspace/{snap['workspace']}/session/items/{user['id']}/activity",
                            headers=AUTH)  # fmt: skip
    assert resp.status == 404 and "not a tool call" in await resp.text()
    resp = await client.get(f"/workspace/{snap['workspace']}/session/items/nope.1/activity",
                            headers=AUTH)  # fmt: skip
    assert resp.status == 404


async def test_links_survive_a_restart(make_client: ClientFactory, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    base = session_base()
    write_transcript(projects, base)
    first = await make_client(claude_dirs=[projects])
    await load_session(first)
    resp = await first.post("/api/activity", json=activity_body(base), headers=AUTH)
    assert resp.status == 200
    await first.close()

    # Same data dir, same transcript: the links are derived again, identically.
    again = await make_client(claude_dirs=[projects])
    snap = await load_session(again)
    await check_links(again, snap)
    health = await (await again.get("/health")).json()
    assert "browser-link" in health["features"]


async def test_the_stream_reads_few_unread_sessions_to_link_and_the_route_reads_all(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    """Six sessions not read yet, each with a call that explains one entry: the stream links what
    the 4 sessions it may read explain; asking for a call reads its session and links its entry."""
    folder = tmp_path / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    base = session_base() - timedelta(minutes=30)
    body = []
    for k in range(6):
        start = base + timedelta(seconds=100 * k)
        lines = "".join(transcript_lines(start))
        lines = lines.replace(SESSION, f"{SESSION[:-1]}{k}").replace("toolu_01", f"toolu_{k}")
        (folder / f"{SESSION[:-1]}{k}.jsonl").write_text(lines)
        body.append({"type": "console", "command": "console.error", "error": f"from session {k}",
                     "status": "error", "workspace": CWD, "ts": iso(start, 11)})  # fmt: skip
    client = await make_client(claude_dirs=[tmp_path / "projects"])
    for _ in range(400):
        listed = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"]
        if listed and listed[0]["sessions"] == 6:
            break
        await asyncio.sleep(0.05)
    ws = listed[0]["id"]
    sessions = state_of(client).store.workspaces[ws].sessions
    assert all(log.loader is not None for log in sessions.values())  # none read yet
    assert (await client.post("/api/activity", json=body, headers=AUTH)).status == 200

    stream = await client.get("/activity/stream", params={"workspace": CWD}, headers=AUTH)
    reader = SSEReader(stream)
    sent = [(await asyncio.wait_for(reader.event(), 10)).data for _ in body]
    stream.close()
    assert sum("link" in e for e in sent) == MAX_LOADS_TO_ANNOTATE == 4
    unread = [sid for sid, log in sessions.items() if log.loader is not None]
    assert len(unread) == 2

    # A card of an unread session asks for its call: the session is read, its entry linked.
    last = sessions[unread[0]]
    k = int(unread[0][-1])
    snap = await (await client.get(f"/workspace/{ws}/session", params={"session": unread[0]},
                                   headers=AUTH)).json()  # fmt: skip
    nav = next(i for i in snap["items"] if i["type"] == "tool_use" and "dashboard" in i["input"])
    got = await call_activity(client, ws, nav["id"])
    assert [e["error"] for e in got["entries"]] == [f"from session {k}"]
    assert last.loader is None
    # Without the token: refused, as every route that reads sessions.
    resp = await client.get(f"/workspace/{ws}/session/items/{nav['id']}/activity")
    assert resp.status == 401
