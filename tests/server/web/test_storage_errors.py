"""A disk that refuses a write is answered 507 JSON by every handler, never 500 text/plain
(issue 29, finding 8): the middleware for writes a handler does not answer itself, and the
ingest path when the spill file of the session's log cannot get room."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sidemirror.app import create_app
from sidemirror.core.durable import StorageError, WriteFailed
from sidemirror.core.held_items import HELD_ITEMS
from sidemirror.core.item_log import DEFAULT_WINDOW
from sidemirror.index.search import SearchIndex
from sidemirror.web import search as web_search

from tests.harness.auth import AUTH, NDJSON, TOKEN
from tests.server.support import ClientFactory, ingest, make_settings, state_of


def _sqlite_full() -> sqlite3.OperationalError:
    """A real "database or disk is full" from SQLite (a database capped at one page)."""
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA max_page_count=2")
    db.execute("CREATE TABLE t (x)")
    try:
        db.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * 10)
    except sqlite3.OperationalError as exc:
        return exc
    raise AssertionError("SQLite took every row")


def _refusal(name: str, data_dir: Path) -> BaseException:
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return {
        "enospc": enospc,
        "edquot": OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)),
        "eio": OSError(errno.EIO, os.strerror(errno.EIO)),
        "efbig": OSError(errno.EFBIG, os.strerror(errno.EFBIG)),
        "erofs": OSError(errno.EROFS, os.strerror(errno.EROFS)),
        "storage_error": StorageError(data_dir / "x", enospc),
        "write_failed": WriteFailed(3, enospc),
        "sqlite_full": _sqlite_full(),
    }[name]


REFUSALS = ["enospc", "edquot", "eio", "efbig", "erofs", "storage_error", "write_failed",
            "sqlite_full"]  # fmt: skip


async def _client_raising(
    aiohttp_client: Any, tmp_path: Path, exc: BaseException
) -> TestClient[Any, Any]:
    app = create_app(make_settings(tmp_path), TOKEN)

    async def failing(request: web.Request) -> web.Response:
        raise exc

    app.router.add_post("/test/write", failing)
    client: TestClient[Any, Any] = await aiohttp_client(app)
    return client


@pytest.mark.parametrize("name", REFUSALS)
async def test_a_storage_error_from_any_handler_is_507_json(
    aiohttp_client: Any, tmp_path: Path, name: str
) -> None:
    data_dir = tmp_path / "data"
    client = await _client_raising(aiohttp_client, tmp_path, _refusal(name, data_dir))
    resp = await client.post("/test/write", headers=AUTH)
    assert resp.status == 507, await resp.text()
    assert resp.content_type == "application/json"
    assert resp.headers["Cache-Control"] == "no-store"
    error = (await resp.json())["error"]
    assert error["code"] == "disk_full"
    assert str(data_dir) in error["message"]
    assert "first_unstored_line" in error and error["first_unstored_line"] is None


@pytest.mark.parametrize(
    "exc", [OSError(errno.ENOENT, "No such file"), RuntimeError("a bug"), ValueError("x")]
)
async def test_other_errors_are_not_taken_for_a_full_disk(
    aiohttp_client: Any, tmp_path: Path, exc: BaseException
) -> None:
    client = await _client_raising(aiohttp_client, tmp_path, exc)
    resp = await client.post("/test/write", headers=AUTH)
    assert resp.status == 500


async def test_ingest_refuses_lines_whose_spill_room_the_disk_refuses(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the log's memory window every new item spills an old one: when the spill file
    cannot get room, the lines are refused (507, `first_unstored_line`) before the journal
    has them, and every id still names its own item."""
    # The log's own window is what spills here, and only its spills reserve room: the budget
    # shared by every log (held_items.py, 1,024 items by default) trims a lone log long before
    # its window, more so when logs of earlier tests in this process still hold items.
    monkeypatch.setattr(HELD_ITEMS, "limit", 10**9)
    monkeypatch.setattr(HELD_ITEMS, "_trim_at", 10**9)
    client = await make_client()
    window = DEFAULT_WINDOW
    params = {"workspace": "/home/dev/spill", "format": "events", "session": "s1"}

    def body(start: int, stop: int) -> str:
        lines = ({"type": "assistant", "content": f"line {n}"} for n in range(start, stop))
        return "".join(json.dumps(line) + "\n" for line in lines)

    resp = await client.post("/api/ingest", params=params, data=body(0, window), headers=NDJSON)
    assert resp.status == 200, await resp.text()

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as m:
        m.setattr(os, "posix_fallocate", full)
        resp = await client.post(
            "/api/ingest", params=params, data=body(window, window + 3), headers=NDJSON
        )
        answer = await resp.json()
    assert resp.status == 507, answer
    assert answer["error"]["code"] == "disk_full"
    assert answer["error"]["first_unstored_line"] == 0 == answer["first_unstored_line"]
    assert answer["accepted"] == 0

    store = state_of(client).store
    ws = next(iter(store.workspaces.values()))
    log = ws.sessions["s1"]
    assert len(log.items) == window
    journal = next((tmp_path / "data" / "ingest").rglob("*.jsonl")).read_text()
    assert f"line {window}" not in journal  # refused: never stored, so never replayed

    resp = await client.post(
        "/api/ingest", params=params, data=body(window, window + 3), headers=NDJSON
    )
    assert resp.status == 200
    snap = await client.get(
        f"/workspace/{ws.id}/session", params={"session": "s1", "limit": 5000}, headers=AUTH
    )
    assert snap.status == 200
    items = (await snap.json())["items"]
    assert [i["content"] for i in items] == [f"line {n}" for n in range(window + 3)]
    assert [i["id"].rsplit(".", 1)[1] for i in items] == [str(n) for n in range(1, window + 4)]


async def test_a_search_index_the_disk_will_not_open_is_opened_once_there_is_room(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Meanwhile ingest and reads go on, and searches answer 503, never 500."""
    real_start = SearchIndex.start
    refusals = [_sqlite_full()]

    def start(index: SearchIndex) -> None:
        if refusals:
            raise refusals.pop()
        real_start(index)

    monkeypatch.setattr(SearchIndex, "start", start)
    monkeypatch.setattr(web_search, "OPEN_RETRY_S", 0.05, raising=False)
    client = await make_client()
    await ingest(client, [{"type": "assistant", "content": "findme"}])
    statuses = set()
    for _ in range(400):
        resp = await client.get("/api/search", params={"q": "findme"}, headers=AUTH)
        statuses.add(resp.status)
        if resp.status == 200 and (await resp.json())["hits"]:
            break
        await asyncio.sleep(0.05)
    assert not refusals, "the index was never asked to open"
    assert resp.status == 200 and statuses <= {200, 503}, statuses
